// Operations for ranks reached through the network (protocol/routes.h): the rank hands them to
// its host proxy as a command-channel message (protocol/command_channel.h), and the proxies carry
// them through the network engine. A payload of up to inline_put_limit bytes travels inside the
// message, written by all threads of the rank, so the buffer is free again on return; a larger
// one stays where it is until the proxy has copied it out, which dcuda_win_flush waits for.
#pragma once

#include "dcuda/detail/device/channel_send.cuh"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/protocol/compact_operation.h"
#include "dcuda/detail/protocol/remote_operation.h"
#include "dcuda/detail/protocol/typed_piece.h"

namespace dcuda::device {

// Payloads up to this size are copied into the message by thread 0 alone: on the latency path a
// block barrier costs more than a few stores.
inline constexpr int single_thread_payload_limit = 16;

// Thread 0: `op` as one compact entry (protocol/compact_operation.h), without a fence: four
// 16-byte stores whose 8-byte halves are stamped words. The consumer checks every word, so
// neither the order in which they arrive nor their grouping matters. `early`: the entry's
// ticket, when take_channel_ticket took it before the call's entry barrier.
__device__ inline void send_compact_operation(dcuda_state& gst, protocol::call call,
                                              const protocol::remote_operation& op,
                                              const void* buffer, held_ticket early) {
  using namespace dcuda::protocol;
  std::uint64_t payload = 0;
  const auto* from = static_cast<const unsigned char*>(buffer);
  for (int at = 0; at < static_cast<int>(op.size); ++at) {
    payload |= static_cast<std::uint64_t>(from[at]) << (8 * at);
  }
  const channel_view& channel = gst.commands;
  const std::uint32_t ticket = early.held ? reserve_held_entry(gst, channel, early, call)
                                          : reserve_channel(gst, channel, 1, call, 0, true);
  const compact_entry entry = encode_compact_operation(op, payload, entry_sequence(ticket));
  auto* to = reinterpret_cast<std::uint64_t*>(&entry_at(channel, ticket));
  for (std::uint32_t i = 0; i < compact_words; i += 2) {
    store_relaxed_sys_v2_u64(to + i, entry.words[i], entry.words[i + 1]);
  }
}

// Thread 0: the message's headers and the operation in entries [first, first + n), then the
// release that hands them to the proxy (after the payload entries, if any, are written).
__device__ inline void publish_operation(dcuda_state& gst, const protocol::channel_view& channel,
                                         std::uint32_t first, std::uint32_t n,
                                         const protocol::remote_operation& op, const void* buffer,
                                         bool wants_acknowledgement) {
  using namespace dcuda::protocol;
  std::uint32_t acknowledgement = 0;
  if (wants_acknowledgement) {
    acknowledgement = ++gst.acks_requested;
    gst.acks_awaited = acknowledgement;
  }
  write_entry_headers(gst, channel, first, n, message_type::remote_operation,
                      static_cast<std::int32_t>(acknowledgement));
  remote_operation sent = op;
  sent.operation_id = acknowledgement;
  volatile auto* words =
      reinterpret_cast<volatile std::uint32_t*>(entry_at(channel, first).payload);
  const auto* op_words = reinterpret_cast<const std::uint32_t*>(&sent);
  for (unsigned i = 0; i < sizeof sent / 4; ++i) words[i] = op_words[i];
  const auto source = reinterpret_cast<std::uint64_t>(buffer);
  words[sizeof sent / 4] = static_cast<std::uint32_t>(source);
  words[sizeof sent / 4 + 1] = static_cast<std::uint32_t>(source >> 32);
  publish_entries(channel, first, n);
}

// The operation a rank of this GPU sends (its operation_id is set when it is published).
__device__ inline protocol::remote_operation operation_of(const dcuda_state& gst,
                                                          protocol::operation_kind kind, int target,
                                                          int slot, int offset, int size, int tag) {
  return {static_cast<std::int32_t>(kind), gst.world_rank, target, slot, offset, size, tag, 0};
}

// How an operation travels in the command channel: its payload inside the message (up to
// inline_put_limit bytes) or left in the rank's buffer until the proxy has copied it out (flush
// waits for the acknowledgement), and how many entries the message takes.
struct operation_shape {
  bool inline_payload;
  bool wants_acknowledgement;
  std::uint32_t entries;
};
__device__ inline operation_shape shape_of(protocol::operation_kind kind, int size) {
  using namespace dcuda::protocol;
  const bool has_payload = kind != operation_kind::notify && size > 0;
  const bool inline_payload = has_payload && size <= inline_put_limit;
  return {inline_payload, has_payload && !inline_payload,
          1u + (inline_payload ? entries_for_bytes(static_cast<std::uint32_t>(size)) : 0u)};
}

// Whether thread 0 sends the operation alone: a notify, a payload of up to
// single_thread_payload_limit bytes, or one the proxy copies out itself. On this latency path no
// barrier precedes the message.
__device__ inline bool sent_by_thread_zero(protocol::operation_kind kind, int size) {
  return !shape_of(kind, size).inline_payload || size <= single_thread_payload_limit;
}

// Thread 0's whole operation where sent_by_thread_zero: a notify or a payload of up to 8 B as a
// compact entry, without a fence; anything else as a message whose inline payload thread 0
// copies. `early`: the entry's ticket from take_channel_ticket, taken only for an operation that
// fits a compact entry (fits_compact_entry). Out of line, as everything on the network path:
// inlined at every put and notify, its code sat between the instructions of the paths within a
// node and made them miss the instruction cache (docs/notes/performance-history.md, "Code size").
__device__ __noinline__ inline void send_operation_alone(dcuda_state& gst, protocol::call call,
                                                         const protocol::remote_operation& op,
                                                         const void* buffer, held_ticket early) {
  using namespace dcuda::protocol;
  const auto kind = static_cast<operation_kind>(op.kind);
  const auto size = static_cast<int>(op.size);
  if (fits_compact_entry(kind, size)) {
    send_compact_operation(gst, call, op, buffer, early);
    return;
  }
  const operation_shape shape = shape_of(kind, size);
  const channel_view& channel = gst.commands;
  const std::uint32_t first = reserve_channel(gst, channel, shape.entries, call, 0, true);
  if (shape.inline_payload) {
    volatile channel_entry& entry = entry_at(channel, first + 1);
    const auto* from = static_cast<const char*>(buffer);
    for (int at = 0; at < size; ++at) entry.payload[at] = from[at];
  }
  publish_operation(gst, channel, first, shape.entries, op, buffer, shape.wants_acknowledgement);
}

// The operation, by every thread of the rank. `early`: as for send_operation_alone. Out of line
// (see send_operation_alone).
__device__ __noinline__ inline void send_remote_operation(dcuda_state& gst, protocol::call call,
                                                          protocol::operation_kind kind, int target,
                                                          int slot, int offset, int size,
                                                          const void* buffer, int tag,
                                                          held_ticket early = {}) {
  using namespace dcuda::protocol;
  const remote_operation op = operation_of(gst, kind, target, slot, offset, size, tag);
  if (sent_by_thread_zero(kind, size)) {
    if (threadIdx.x == 0) send_operation_alone(gst, call, op, buffer, early);
    // After the message has left: thread 0 has read an inline payload (the rank may reuse its
    // buffer). A notify has none.
    if (kind != operation_kind::notify) __syncthreads();
    return;
  }

  // A payload of several entries: written by all threads.
  const operation_shape shape = shape_of(kind, size);
  const std::uint32_t n = shape.entries;
  const std::uint32_t payload_entries = n - 1;
  const channel_view& channel = gst.commands;
  const auto* from = static_cast<const char*>(buffer);
  if (threadIdx.x == 0) {
    gst.broadcast = static_cast<std::int32_t>(reserve_channel(gst, channel, n, call, 0, true));
  }
  __syncthreads();
  const auto first = static_cast<std::uint32_t>(gst.broadcast);
  const std::uint32_t total = payload_entries * entry_payload_bytes;
  for (std::uint32_t at = threadIdx.x; at < total; at += blockDim.x) {
    volatile channel_entry& entry = entry_at(channel, first + 1 + at / entry_payload_bytes);
    entry.payload[at % entry_payload_bytes] = at < static_cast<std::uint32_t>(size) ? from[at] : 0;
  }
  __syncthreads();  // the payload is written before thread 0 publishes it
  if (threadIdx.x == 0) publish_operation(gst, channel, first, n, op, buffer, false);
}

// Thread 0: a typed put to the network (protocol/typed_piece.h) as a message of two entries: the
// operation and the source's address, then the two types and counts. The proxy packs the source
// in pieces, so, like a large put's, it stays untouched until dcuda_win_flush. Out of line (see
// send_operation_alone).
__device__ __noinline__ inline void send_typed_put_request(
    dcuda_state& gst, protocol::call call, const protocol::remote_operation& op, const void* source,
    const protocol::typed_put_request& request) {
  using namespace dcuda::protocol;
  static_assert(sizeof(typed_put_request) <= entry_payload_bytes);
  const channel_view& channel = gst.commands;
  const std::uint32_t first = reserve_channel(gst, channel, 2, call, 0, true);
  volatile auto* words =
      reinterpret_cast<volatile std::uint32_t*>(entry_at(channel, first + 1).payload);
  const auto* request_words = reinterpret_cast<const std::uint32_t*>(&request);
  for (unsigned i = 0; i < sizeof request / 4; ++i) words[i] = request_words[i];
  publish_operation(gst, channel, first, 2, op, source, true);
}

// Waits until the proxy has copied out the payload of every large network put of this rank. Out
// of line (see send_operation_alone).
__device__ __noinline__ inline void wait_for_staged_puts(dcuda_state& gst, protocol::call call) {
  if (threadIdx.x == 0) {
    const std::uint32_t needed = gst.acks_awaited;
    std::uint32_t* acks = &gst.ctx->host_acks[gst.device_rank];
    spin_until(gst,
               wait_description{call, protocol::wait_kind::host_ack,
                                static_cast<std::int32_t>(needed), needed},
               [&](std::uint32_t& answered) {
                 answered =
                     protocol::system_atomic<std::uint32_t>(*acks).load(cuda::memory_order_acquire);
                 return protocol::reached(answered, needed);
               });
  }
  __syncthreads();
}

}  // namespace dcuda::device
