// Notification accounting (thesis 4.4). Per rank and tag there are monotonic arrival counters
// (ranks of this GPU and the delivery agent add to one, peer GPUs to their rings' counters) and a
// consumed count private to the rank. Nothing is ever reset during a run, so the comparison must
// survive 32-bit wraparound. Host-initiated notifications (dcuda/host_stream.h) are counted apart,
// from the context's start, with a consumed count that the rank keeps across runs.
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

// Index of the counter of (rank, tag) in a [ranks][tag_count] array.
DCUDA_HD constexpr std::uint32_t counter_index(std::uint32_t rank, std::uint32_t tag) {
  return rank * 256u + tag;
}

// Whether `count` more notifications can be consumed given the arrivals seen so far.
DCUDA_HD constexpr bool notifications_available(std::uint32_t arrived, std::uint32_t consumed,
                                                std::uint32_t count) {
  return reached(arrived, consumed + count);
}

// How many notifications are waiting (for diagnostics).
DCUDA_HD constexpr std::uint32_t notifications_pending(std::uint32_t arrived,
                                                       std::uint32_t consumed) {
  return arrived - consumed;
}

// How a wait takes `needed` notifications from the two kinds a rank counts: those sent by ranks
// first (`ranks_pending` of them unconsumed), the rest from the host-initiated ones. The caller
// has checked that enough are available (notifications_available_from_both).
struct notification_take {
  std::uint32_t from_ranks;
  std::uint32_t from_host;
};

DCUDA_HD constexpr notification_take split_notifications(std::uint32_t ranks_pending,
                                                         std::uint32_t needed) {
  return ranks_pending >= needed ? notification_take{needed, 0u}
                                 : notification_take{ranks_pending, needed - ranks_pending};
}

// Whether `needed` notifications are available from both kinds together (64-bit: the sum of two
// pending counts must not wrap).
DCUDA_HD constexpr bool notifications_available_from_both(std::uint32_t ranks_pending,
                                                          std::uint32_t host_pending,
                                                          std::uint32_t needed) {
  return std::uint64_t{ranks_pending} + host_pending >= needed;
}

}  // namespace dcuda::protocol
