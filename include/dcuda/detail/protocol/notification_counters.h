// Notification accounting (thesis 4.4). Per rank and tag there are two monotonic arrival counters,
// one bumped by device atomics (ranks of this GPU), one written only by the host proxy (remote
// ranks), and a consumed counter private to the rank. Nothing is ever reset during a run, so the
// comparison must survive 32-bit wraparound.
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

}  // namespace dcuda::protocol
