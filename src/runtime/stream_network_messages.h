// The messages that carry stream-ordered operations through the network (runtime/stream_network.h)
// and the bookkeeping of their completion, apart from MPI and CUDA so that the CPU tests check
// them.
//
// Between two processes everything travels in one direction in the order it was sent: headers on
// one MPI tag, the payload of a put on another, in pieces of one network chunk right after its
// header. The receiver handles each sender's headers one after another and a put's payload before
// the sender's next header, so a notification or a barrier arrival is counted only after the
// bytes the sender put before it are in the window.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dcuda::runtime {

enum class stream_message_kind : std::uint32_t {
  put = 1,              // `size` bytes for `offset` in `window` of `rank`; `tag` >= 0: then notify
  notify = 2,           // one notification of `tag` at `rank`
  acknowledgement = 3,  // the oldest put this process sent to the receiver is in its window
  barrier_arrival = 4,  // the sender's stream has reached its barrier number `sequence`
  closing = 5,          // the sender sends nothing more (dcuda_host_finish)
};

struct stream_message {
  std::uint32_t kind = 0;      // stream_message_kind
  std::int32_t rank = 0;       // put, notify: the target world rank
  std::int32_t window = 0;     // put, notify: the host window's handle
  std::int32_t tag = -1;       // put: -1 without notification; notify: the tag
  std::uint64_t offset = 0;    // put
  std::uint64_t size = 0;      // put: the payload's bytes
  std::uint64_t sequence = 0;  // barrier_arrival: the barrier's number, from 1
};
static_assert(sizeof(stream_message) == 40, "a header is sent as 40 bytes");

// What an incoming header is checked against (nothing from another process is trusted).
struct stream_message_context {
  int sender = 0;      // the sending process
  int rank_start = 0;  // this process's world ranks: rank_start..rank_start + rank_count - 1
  int rank_count = 0;
  int tag_count = 0;  // tags 0..tag_count - 1
  // The bytes this process exposes in host window `handle`; none: no live host window of that
  // handle.
  std::function<std::optional<std::uint64_t>(int handle)> window_size;
  std::uint64_t unacknowledged_puts = 0;  // puts this process sent to the sender, not yet answered
  std::uint64_t barriers_met = 0;         // barriers completed here
};

// Empty when the header is one dcuda sends; otherwise what is wrong with it, naming the value.
std::optional<std::string> check_stream_message(const stream_message& message,
                                                const stream_message_context& context);

// The header in words, for the network thread's trace: its kind and the fields the kind uses.
std::string stream_message_text(const stream_message& message);

// Per target process: the puts this process sent through the network, and how many of them the
// target has acknowledged (applied to its window). A flush waits until the acknowledgements cover
// what was sent when it was reached.
class stream_put_ledger {
 public:
  explicit stream_put_ledger(int processes);
  void sent(int process);
  void acknowledged(int process);  // check_stream_message has refused one nobody waits for
  std::uint64_t unacknowledged(int process) const;
  std::vector<std::uint64_t> sent_so_far() const;
  bool covers(const std::vector<std::uint64_t>& needed) const;  // acknowledged >= needed, each
  bool all_acknowledged() const;

 private:
  std::vector<std::uint64_t> sent_;
  std::vector<std::uint64_t> acknowledged_;
};

// The arrivals of the other processes at the stream barriers. A process's streams may reach its
// barriers out of order (the n-th call on one stream, the n+1-th on another), so arrivals are
// kept by number until every other process has arrived at it.
class stream_barrier_tally {
 public:
  stream_barrier_tally(int processes, int self);
  // Counts `process`'s arrival at barrier `number`; false when it arrived there already.
  bool arrive(int process, std::uint64_t number);
  // Whether every other process has arrived at barrier `number`; if so it is forgotten and counts
  // as met.
  bool take_complete(std::uint64_t number);
  std::uint64_t met() const { return met_; }
  // The processes that have not arrived at barrier `number`, for the watchdog's report.
  std::vector<int> missing(std::uint64_t number) const;

 private:
  int processes_;
  int self_;
  std::uint64_t met_ = 0;
  std::map<std::uint64_t, std::vector<bool>> arrived_;  // by barrier number, per process
};

}  // namespace dcuda::runtime
