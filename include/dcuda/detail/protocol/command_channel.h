// Device -> host channel: one multi-producer, single-consumer ring per GPU (docs/design.md).
//
// Who writes what:
//   ticket          device memory, producers only (atomic fetch_add reserves entries)
//   entries[]       host memory mapped into the device; a producer fills an entry, then stores
//                   its sequence number (entry_sequence: ticket + 1, never 0) with release, so
//                   the host never reads a head pointer: an entry is ready exactly when its
//                   sequence matches
//   consumed        host memory; the consumer stores how many entries it has finished, lazily
//                   (every quarter ring, and whenever it runs dry); producers read it only when
//                   the ring looks full (through a cached copy in device memory), so a full ring
//                   makes producers wait and nothing is lost.
//   consumed_poller device memory; while the ring is full, the one producer that holds it reads
//                   `consumed` over PCIe and refreshes the cached copy, the others watch the copy
//                   (producer_has_room).
// A message of n entries reserves n consecutive tickets at once, so the consumer reads it
// contiguously even when other producers interleave.
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

enum class message_type : std::uint16_t {
  empty,
  log_line,     // aux = thread (or -1 for the rank's own stream); payload: text
  timer_start,  // host takes the time on receipt
  timer_stop,
  ping,              // host answers by acknowledging `aux` (dcuda_ping_host)
  remote_operation,  // aux: acknowledgement the rank waits for in flush (0: none); payload: a
                     // protocol::remote_operation and the source address (8 bytes), then the
                     // data itself in the following entries when it travels inline
  world_collective,  // aux: sequence; payload: protocol::world_collective_request
  remote_operation_compact,  // one entry of stamped words (protocol/compact_operation.h); the
                             // consumer hands it on as a remote_operation message
};

inline constexpr std::uint32_t entry_bytes = 64;
inline constexpr std::uint32_t entry_header_bytes = 16;
inline constexpr std::uint32_t entry_payload_bytes = entry_bytes - entry_header_bytes;

struct channel_entry {
  std::uint32_t sequence;  // entry_sequence(ticket) once the entry is complete (release)
  std::uint16_t type;      // message_type; continuation entries of a message repeat it
  std::uint16_t entries;   // entries of the whole message (first entry), 0 on continuations
  std::int32_t rank;       // world rank of the producer
  std::int32_t aux;        // meaning depends on type
  char payload[entry_payload_bytes];
};
static_assert(sizeof(channel_entry) == entry_bytes);

struct channel_view {
  channel_entry* entries;          // capacity entries, host memory
  std::uint32_t capacity;          // power of two
  std::uint32_t* ticket;           // producers' counter
  std::uint32_t* consumed;         // consumer's published position (host memory)
  std::uint32_t* consumed_seen;    // producers' cached copy of `consumed` (device memory)
  std::uint32_t* consumed_poller;  // 1 while a producer reads `consumed` (device memory)
};

DCUDA_HD constexpr std::uint32_t entries_for_bytes(std::uint32_t bytes) {
  return bytes == 0 ? 1u : (bytes + entry_payload_bytes - 1) / entry_payload_bytes;
}

// Reserves `n` consecutive entries and returns the first ticket.
DCUDA_HD inline std::uint32_t reserve_entries(const channel_view& channel, std::uint32_t n) {
  return device_atomic<std::uint32_t>(*channel.ticket).fetch_add(n, cuda::memory_order_relaxed);
}

// Whether entries [ticket, ticket + n) are free given what the consumer has published.
DCUDA_HD constexpr bool entries_free(std::uint32_t ticket, std::uint32_t n, std::uint32_t consumed,
                                     std::uint32_t capacity) {
  return reached(consumed + capacity, ticket + n);
}

DCUDA_HD inline std::uint32_t read_consumed(const channel_view& channel) {
  return system_atomic<std::uint32_t>(*channel.consumed).load(cuda::memory_order_acquire);
}

// A producer's check for room for entries [ticket, ticket + n); `consumed` is set to the position
// it went by. The cached copy answers when it can. Otherwise one producer at a time reads the
// consumer's position over PCIe: when 131 ranks of an H200 all did so while the ring was full,
// their reads crowded out the delivery agent's, and each of its jobs took ~200 us instead of a
// few (docs/notes/performance-history.md, "The all-ranks network stall"). Pollers are serialised,
// so the cached copy, refreshed only by them, never goes backwards.
DCUDA_HD inline bool producer_has_room(const channel_view& channel, std::uint32_t ticket,
                                       std::uint32_t n, std::uint32_t& consumed) {
  auto cached = device_atomic<std::uint32_t>(*channel.consumed_seen);
  consumed = cached.load(cuda::memory_order_relaxed);
  if (entries_free(ticket, n, consumed, channel.capacity)) return true;
  auto poller = device_atomic<std::uint32_t>(*channel.consumed_poller);
  if (poller.exchange(1u, cuda::memory_order_acquire) != 0u) return false;  // another one reads
  consumed = read_consumed(channel);
  cached.store(consumed, cuda::memory_order_relaxed);
  poller.store(0u, cuda::memory_order_release);
  return entries_free(ticket, n, consumed, channel.capacity);
}

DCUDA_HD inline channel_entry& entry_at(const channel_view& channel, std::uint32_t ticket) {
  return channel.entries[ticket & (channel.capacity - 1)];
}

// The sequence that marks the entry of `ticket` complete: ticket + 1, never 0, which is what an
// entry never written holds (at ticket 2^32 - 1 a zeroed entry would otherwise look complete). The
// consecutive tickets of one slot differ by the
// capacity, so their sequences still differ.
DCUDA_HD constexpr std::uint32_t entry_sequence(std::uint32_t ticket) {
  return ticket + 1u == 0u ? 1u : ticket + 1u;
}

// Makes an entry whose other fields are written visible to the consumer. Release at system scope
// orders the payload stores (made by this thread) before the sequence.
DCUDA_HD inline void publish_entry(channel_entry& entry, std::uint32_t ticket) {
  system_atomic<std::uint32_t>(entry.sequence)
      .store(entry_sequence(ticket), cuda::memory_order_release);
}

// Consumer side: the entry for `position` if it is complete, otherwise nullptr.
DCUDA_HD inline const channel_entry* ready_entry(const channel_view& channel,
                                                 std::uint32_t position) {
  channel_entry& entry = entry_at(channel, position);
  const std::uint32_t sequence =
      system_atomic<std::uint32_t>(entry.sequence).load(cuda::memory_order_acquire);
  return sequence == entry_sequence(position) ? &entry : nullptr;
}

DCUDA_HD inline void publish_consumed(const channel_view& channel, std::uint32_t position) {
  system_atomic<std::uint32_t>(*channel.consumed).store(position, cuda::memory_order_release);
}

}  // namespace dcuda::protocol
