// A command channel held in ordinary host memory, for CPU tests: host threads stand in for the
// ranks that produce, the runtime's consumer reads. Same layout as the device's (one ring, its
// ticket, the consumer position, the producers' cached copy of it and their poller flag).
#pragma once

#include <cstdint>
#include <vector>

#include "dcuda/detail/protocol/command_channel.h"

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

}  // namespace dcuda_test
