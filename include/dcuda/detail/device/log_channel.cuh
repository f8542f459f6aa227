// The device side of the log channel: a line of dcuda_log sent as consecutive entries.
#pragma once

#include "dcuda/detail/device/channel_send.cuh"
#include "dcuda/detail/protocol/limits.h"

namespace dcuda::device {

// Sends `length` characters as one line of the log channel, in consecutive entries so that
// lines of different ranks never mix. `thread` is -1 for the rank's own stream.
__device__ inline void send_log_line(dcuda_state& gst, const char* text, int length,
                                     std::int32_t thread) {
  using namespace dcuda::protocol;
  const channel_view& channel = gst.ctx->logs;
  const std::uint32_t n = entries_for_bytes(static_cast<std::uint32_t>(length));
  const std::uint32_t first = reserve_channel(gst, channel, n, call::log, 1, threadIdx.x == 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    volatile channel_entry& entry = entry_at(channel, first + i);
    entry.type = static_cast<std::uint16_t>(message_type::log_line);
    entry.entries = static_cast<std::uint16_t>(i == 0 ? n : 0);
    entry.rank = gst.world_rank;
    entry.aux = thread;
    for (std::uint32_t c = 0; c < entry_payload_bytes; ++c) {
      const std::uint32_t at = i * entry_payload_bytes + c;
      entry.payload[c] = at < static_cast<std::uint32_t>(length) ? text[at] : '\0';
    }
    publish_entry(entry_at(channel, first + i), first + i);
  }
}

// A fixed line (no formatting, so no line buffer in the caller's stack frame).
template <int N>
__device__ inline void send_log_literal(dcuda_state& gst, const char (&text)[N]) {
  send_log_line(gst, text, N - 1, -1);
}

}  // namespace dcuda::device
