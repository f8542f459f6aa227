// Monotonic-counter barrier: every participant adds 1 per episode; episode e is complete once the
// counter reaches e * participants. No reset and no sense flag, so a fast rank can enter the next
// episode while slow ranks still read the counter of the previous one.
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

DCUDA_HD constexpr std::uint32_t barrier_target(std::uint32_t episode, std::uint32_t participants) {
  return episode * participants;
}

// Arrivals still missing in `episode` when the counter reads `counter` (for diagnostics).
DCUDA_HD constexpr std::uint32_t barrier_missing(std::uint32_t counter, std::uint32_t episode,
                                                 std::uint32_t participants) {
  const std::uint32_t target = barrier_target(episode, participants);
  return reached(counter, target) ? 0u : target - counter;
}

}  // namespace dcuda::protocol
