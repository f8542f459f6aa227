#include "runtime/channel_consumer.h"

#include <cstring>

#include "dcuda/detail/protocol/compact_operation.h"
#include "runtime/error.h"

namespace dcuda::runtime {

std::optional<channel_message> channel_consumer::try_take() {
  const protocol::channel_entry* first = protocol::ready_entry(view_, position_);
  if (first == nullptr) return std::nullopt;
  // Relaxed atomic: a compact entry's head is one 8-byte atomic store of the producer, and only
  // its sequence half is ordered by ready_entry's acquire (the compact reader then checks every
  // word's sequence); the type shares that word.
  const std::uint16_t type =
      protocol::system_atomic<std::uint16_t>(const_cast<std::uint16_t&>(first->type))
          .load(cuda::memory_order_relaxed);
  if (type == static_cast<std::uint16_t>(protocol::message_type::remote_operation_compact)) {
    return try_take_compact();
  }
  const std::string problem =
      checks::check_channel_entry(std::as_bytes(std::span(first, 1)), limits_);
  if (!problem.empty()) throw error(problem);
  const std::uint32_t entries = first->entries == 0 ? 1u : first->entries;
  for (std::uint32_t i = 1; i < entries; ++i) {
    if (protocol::ready_entry(view_, position_ + i) == nullptr) return std::nullopt;
  }
  channel_message message{
      static_cast<protocol::message_type>(first->type), first->rank, first->aux, {}};
  const bool text = message.type == protocol::message_type::log_line;
  const bool carries_bytes = text || message.type == protocol::message_type::remote_operation ||
                             message.type == protocol::message_type::world_collective;
  for (std::uint32_t i = 0; carries_bytes && i < entries; ++i) {
    const protocol::channel_entry& entry = protocol::entry_at(view_, position_ + i);
    std::size_t length = protocol::entry_payload_bytes;
    if (text) {
      length = 0;
      while (length < protocol::entry_payload_bytes && entry.payload[length] != '\0') ++length;
    }
    message.text.append(entry.payload, length);
  }
  advance(entries);
  return message;
}

// The entry at position_ is a compact operation whose head has arrived; its other words may
// still be on their way, each on its own (no fence orders them).
std::optional<channel_message> channel_consumer::try_take_compact() {
  auto* words = reinterpret_cast<std::uint64_t*>(&protocol::entry_at(view_, position_));
  protocol::compact_entry entry{};
  for (std::uint32_t i = 0; i < protocol::compact_words; ++i) {
    entry.words[i] =
        protocol::system_atomic<std::uint64_t>(words[i]).load(cuda::memory_order_acquire);
  }
  protocol::remote_operation op{};
  std::uint64_t payload = 0;
  if (!protocol::decode_compact_operation(entry, protocol::entry_sequence(position_), op, payload))
    return std::nullopt;
  // Complete now: checked before its size says how much of `payload` to copy (the operation's
  // other fields are checked where the proxy takes it, network_proxy::take_operation).
  const std::string problem = checks::check_compact_operation(op, limits_);
  if (!problem.empty()) throw error(problem);
  // The layout the regular message has (network_proxy::take_operation): the operation and its
  // source address (none) in the first entry's payload, then the inline payload.
  std::string text(protocol::entry_payload_bytes, '\0');
  std::memcpy(text.data(), &op, sizeof op);
  if (protocol::carries_payload(op)) {
    text.append(reinterpret_cast<const char*>(&payload), static_cast<std::size_t>(op.size));
  }
  channel_message message{protocol::message_type::remote_operation, op.source_rank, 0,
                          std::move(text)};
  advance(1);
  return message;
}

void channel_consumer::advance(std::uint32_t entries) {
  position_ += entries;
  if (position_ - published_ >= view_.capacity / 4) publish_position();
}

void channel_consumer::publish_position() {
  if (published_ == position_) return;
  protocol::publish_consumed(view_, position_);
  published_ = position_;
}

}  // namespace dcuda::runtime
