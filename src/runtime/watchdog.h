// Finds waits that make no progress. The device publishes a rank's wait_record only once the
// wait has spun for a while (device/spin_wait.cuh); the watchdog reads all records.
//
// When some rank's wait has stayed unchanged for the timeout, it describes every rank so the user
// sees who waits for what. The run is stopped only when that is a standstill: every rank either
// waits without progress or has finished. While some rank is outside any dcuda wait (computing),
// waiting ranks may be legitimately idle (a long phase of a few ranks), so the report is a
// warning and the run goes on; it is repeated if the picture changes.
//
// A kernel with a delivery agent (runs of several processes) ends only once every rank has called
// dcuda_gpu_finish. Ranks that return from the kernel without it publish nothing, so no rank is
// ever stuck; instead the watchdog warns (once) when for the timeout no rank of the GPU has been
// seen in any published wait and none has finished. It cannot stop the run: ranks that compute for
// long without dcuda calls look the same.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dcuda/detail/protocol/wait_record.h"

namespace dcuda::runtime {

class watchdog {
 public:
  using clock = std::chrono::steady_clock;

  // records: [device_ranks] in host memory; timeout_s 0 turns the watchdog off.
  // `other_processes`, when given, says what this process waits for from the others (the host
  // proxy's view of the current world collective); it is added to every report.
  // `kernel_waits_for_finish`: the kernel runs a delivery agent, which leaves only once every rank
  // has called dcuda_gpu_finish; turns on the warning about a quiet GPU (see above).
  watchdog(const protocol::wait_record* records, int device_ranks, int rank_start, double timeout_s,
           std::function<std::string()> other_processes = {}, bool kernel_waits_for_finish = false);

  struct verdict {
    enum kind { fine, warning, standstill } what = fine;
    std::string report;  // for warning and standstill
  };

  // Reads the records and judges them (see above).
  verdict check(clock::time_point now);

  // One line per group of consecutive ranks in the same state.
  std::string describe_ranks() const;

 private:
  struct seen {
    protocol::wait_record record{};
    clock::time_point since{};  // when `record`'s content last changed
    std::uint32_t version = 0;  // the record's version at the last check
    // The last check at which the rank showed a published wait or had finished (its kind was not
    // none, or its version had changed); if it shows none now, it has been outside any published
    // dcuda wait since then.
    clock::time_point outside_since{};
  };
  protocol::wait_record read(int rank) const;
  std::string quiet_warning() const;

  const protocol::wait_record* records_;
  int device_ranks_;
  int rank_start_;
  double timeout_s_;
  std::function<std::string()> other_processes_;
  bool kernel_waits_for_finish_;
  std::vector<seen> seen_;
  std::string last_warning_;  // a warning is printed again only when it says something new
  // Since when no rank has been seen in a published wait nor finished (unset before the first
  // check); whether the quiet warning was given (its text never changes, so it is given once).
  std::optional<clock::time_point> quiet_since_;
  bool quiet_warned_ = false;
};

}  // namespace dcuda::runtime
