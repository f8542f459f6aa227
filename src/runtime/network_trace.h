// DCUDA_NETWORK_TRACE=<prefix> (docs/settings.md): the host proxy notes the moment each network
// operation passes each of its hops, and writes them to <prefix>.<process>.csv when the run ends.
// scripts/network_trace.py matches the files of all processes and prints where the time goes.
// The clock is the host's monotonic clock, which the processes of one node share; across nodes
// only the hops within one process compare.
//
// Off (an empty prefix), record() is one branch. On, it appends to memory (no I/O on the proxy's
// path) and keeps the first `capacity` records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcuda/detail/protocol/remote_operation.h"

namespace dcuda::runtime {

class network_trace {
 public:
  enum class hop : std::uint8_t {
    taken,     // the source's proxy took the operation from the command channel
    posted,    // ... handed it to the network engine
    arrived,   // the target's proxy found its header and set a queue slot aside for it
    to_agent,  // ... gave the delivery agent its job (data, then the notification)
  };
  static constexpr std::size_t capacity = 1 << 20;

  network_trace(std::string prefix, int process);
  network_trace(const network_trace&) = delete;
  network_trace& operator=(const network_trace&) = delete;
  ~network_trace();  // writes the file (errors are printed, not thrown: it runs at the run's end)

  void record(hop what, const protocol::remote_operation& op) {
    if (!prefix_.empty() && records_.size() < capacity) note(what, op);
  }

  // The file it writes ("" when off).
  std::string path() const;

 private:
  struct entry {
    std::int64_t ns;
    std::int32_t source_rank, target_rank, kind;
    std::int64_t size;
    hop what;
  };
  void note(hop what, const protocol::remote_operation& op);

  std::string prefix_;
  int process_;
  std::vector<entry> records_;
};

}  // namespace dcuda::runtime
