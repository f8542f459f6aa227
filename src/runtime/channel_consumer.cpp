#include "runtime/channel_consumer.h"

namespace dcuda::runtime {

std::optional<channel_message> channel_consumer::try_take() {
  const protocol::channel_entry* first = protocol::ready_entry(view_, position_);
  if (first == nullptr) return std::nullopt;
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
  position_ += entries;
  if (position_ - published_ >= view_.capacity / 4) publish_position();
  return message;
}

void channel_consumer::publish_position() {
  if (published_ == position_) return;
  protocol::publish_consumed(view_, position_);
  published_ = position_;
}

}  // namespace dcuda::runtime
