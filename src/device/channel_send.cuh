// Producer side of the device->host channels (protocol/command_channel.h explains the ring).
#pragma once

#include "device/spin_wait.cuh"
#include "protocol/command_channel.h"

namespace dcuda::device {

// Reserves `n` consecutive entries of `channel`, waiting while the host has not drained enough.
// The consumer position is read from host memory only when the cached copy says the ring is
// full, so a send costs one device atomic and the entry's stores, not a PCIe round trip.
__device__ inline std::uint32_t reserve_channel(dcuda_state& gst,
                                                const protocol::channel_view& channel,
                                                std::uint32_t n, protocol::call call,
                                                std::int32_t channel_id, bool may_report) {
  const std::uint32_t ticket = protocol::reserve_entries(channel, n);
  std::uint32_t* seen = channel.consumed_seen;
  const auto has_room = [&](std::uint32_t& consumed) {
    consumed = protocol::device_atomic<std::uint32_t>(*seen).load(cuda::memory_order_relaxed);
    if (protocol::entries_free(ticket, n, consumed, channel.capacity)) return true;
    consumed = protocol::read_consumed(channel);
    protocol::device_atomic<std::uint32_t>(*seen).store(consumed, cuda::memory_order_relaxed);
    return protocol::entries_free(ticket, n, consumed, channel.capacity);
  };
  if (may_report) {
    spin_until(gst, wait_description{call, protocol::wait_kind::channel_room, channel_id, n},
               has_room);
  } else {
    std::uint32_t consumed;
    while (!has_room(consumed)) {
      if (protocol::system_atomic<std::uint32_t>(*gst.ctx->abort_requested)
              .load(cuda::memory_order_relaxed) != 0u) {
        __trap();
      }
      __nanosleep(200);
    }
  }
  return ticket;
}

// Sends a one-entry message with no payload.
__device__ inline void send_signal(dcuda_state& gst, const protocol::channel_view& channel,
                                   protocol::message_type type, std::int32_t aux,
                                   protocol::call call) {
  const std::uint32_t ticket = reserve_channel(gst, channel, 1, call, 0, threadIdx.x == 0);
  volatile protocol::channel_entry& entry = protocol::entry_at(channel, ticket);
  entry.type = static_cast<std::uint16_t>(type);
  entry.entries = 1;
  entry.rank = gst.world_rank;
  entry.aux = aux;
  protocol::publish_entry(protocol::entry_at(channel, ticket), ticket);
}

}  // namespace dcuda::device
