// Producer side of the device->host channels (protocol/command_channel.h explains the ring).
#pragma once

#include "dcuda/detail/device/spin_wait.cuh"
#include "dcuda/detail/device/tickets.cuh"
#include "dcuda/detail/protocol/command_channel.h"

namespace dcuda::device {

// Waits until entries [ticket, ticket + n) of `channel` are free. The consumer position is read
// from host memory only when the cached copy says the ring is full (and then by one waiting rank
// at a time), so a send costs one device atomic and the entry's stores, not a PCIe round trip.
__device__ inline void wait_for_channel_room(dcuda_state& gst,
                                             const protocol::channel_view& channel,
                                             std::uint32_t ticket, std::uint32_t n,
                                             protocol::call call, std::int32_t channel_id,
                                             bool may_report) {
  const auto has_room = [&](std::uint32_t& consumed) {
    return protocol::producer_has_room(channel, ticket, n, consumed);
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
}

// Reserves `n` consecutive entries of `channel`, waiting while the host has not drained enough.
__device__ inline std::uint32_t reserve_channel(dcuda_state& gst,
                                                const protocol::channel_view& channel,
                                                std::uint32_t n, protocol::call call,
                                                std::int32_t channel_id, bool may_report) {
  const std::uint32_t ticket = protocol::reserve_entries(channel, n);
  wait_for_channel_room(gst, channel, ticket, n, call, channel_id, may_report);
  return ticket;
}

// Thread 0, before a call's entry barrier: reserves one entry of `channel` (held_ticket, in
// tickets.cuh). The cached consumer position is loaded first, so that it and the atomic are in
// flight together.
__device__ inline held_ticket take_channel_ticket(const protocol::channel_view& channel) {
  held_ticket taken;
  taken.seen = protocol::device_atomic<std::uint32_t>(*channel.consumed_seen)
                   .load(cuda::memory_order_relaxed);
  taken.ticket = take_ticket_from(channel.ticket);
  taken.held = true;
  return taken;
}

// The entry of a ticket taken with take_channel_ticket, once it is free.
__device__ inline std::uint32_t reserve_held_entry(dcuda_state& gst,
                                                   const protocol::channel_view& channel,
                                                   held_ticket held, protocol::call call) {
  if (!protocol::entries_free(held.ticket, 1, held.seen, channel.capacity)) {
    wait_for_channel_room(gst, channel, held.ticket, 1, call, 0, true);
  }
  return held.ticket;
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

// Makes entries [first, first + n) visible to the consumer at once: one release fence at system
// scope, then relaxed stores of the sequence numbers (a release pattern for every entry). The
// fence is cumulative: it covers the stores other threads of the block made before the block
// barrier that preceded it.
__device__ inline void publish_entries(const protocol::channel_view& channel, std::uint32_t first,
                                       std::uint32_t n) {
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_system);
  for (std::uint32_t i = 0; i < n; ++i) {
    protocol::system_atomic<std::uint32_t>(protocol::entry_at(channel, first + i).sequence)
        .store(protocol::entry_sequence(first + i), cuda::memory_order_relaxed);
  }
}

// Writes the header of every entry of a message of n entries starting at `first`.
__device__ inline void write_entry_headers(const dcuda_state& gst,
                                           const protocol::channel_view& channel,
                                           std::uint32_t first, std::uint32_t n,
                                           protocol::message_type type, std::int32_t aux) {
  for (std::uint32_t i = 0; i < n; ++i) {
    volatile protocol::channel_entry& entry = protocol::entry_at(channel, first + i);
    entry.type = static_cast<std::uint16_t>(type);
    entry.entries = static_cast<std::uint16_t>(i == 0 ? n : 0);
    entry.rank = gst.world_rank;
    entry.aux = aux;
  }
}

// Sends `bytes` of `payload` as one message (thread 0 alone).
__device__ inline void send_message(dcuda_state& gst, const protocol::channel_view& channel,
                                    protocol::message_type type, std::int32_t aux,
                                    const void* payload, std::uint32_t bytes, protocol::call call) {
  using namespace dcuda::protocol;
  const std::uint32_t n = entries_for_bytes(bytes);
  const std::uint32_t first = reserve_channel(gst, channel, n, call, 0, true);
  write_entry_headers(gst, channel, first, n, type, aux);
  const auto* from = static_cast<const char*>(payload);
  for (std::uint32_t at = 0; at < n * entry_payload_bytes; ++at) {
    volatile channel_entry& entry = entry_at(channel, first + at / entry_payload_bytes);
    entry.payload[at % entry_payload_bytes] = at < bytes ? from[at] : '\0';
  }
  publish_entries(channel, first, n);
}

}  // namespace dcuda::device
