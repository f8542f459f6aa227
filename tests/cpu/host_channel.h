// A command channel held in ordinary host memory, for CPU tests: host threads stand in for the
// ranks that produce, the runtime's consumer reads. Same layout as the device's (one ring, its
// ticket, the consumer position, the producers' cached copy of it and their poller flag).
#pragma once

#include <cstdint>
#include <vector>

#include "dcuda/detail/protocol/command_channel.h"
#include "transport/message_checks.h"

namespace dcuda_test {

struct host_channel {
  explicit host_channel(std::uint32_t capacity, std::uint32_t start = 0)
      : entries(capacity), ticket(start), consumed(start), seen(start) {
    view = {entries.data(), capacity, &ticket, &consumed, &seen, &poller};
  }
  std::vector<dcuda::protocol::channel_entry> entries;
  std::uint32_t ticket, consumed, seen, poller = 0;
  dcuda::protocol::channel_view view{};
};

// The producers' ranks the tests' consumers accept: world ranks 0..63 of a world of 64.
inline constexpr dcuda::checks::channel_limits test_ranks{0, 64, 0, 64};

}  // namespace dcuda_test
