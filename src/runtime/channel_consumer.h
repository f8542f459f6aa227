// Host side of a device->host channel (protocol/command_channel.h): takes complete messages in
// ticket order and tells producers, lazily, how far it has read.
#pragma once

#include <optional>
#include <string>

#include "dcuda/detail/protocol/command_channel.h"

namespace dcuda::runtime {

struct channel_message {
  protocol::message_type type;
  int rank;
  int aux;
  std::string text;  // log lines: the payload of all entries up to the first NUL; other
                     // messages: the payload of all entries, every byte
};

class channel_consumer {
 public:
  // `start`: the ticket producers start from (0 after a reset).
  explicit channel_consumer(protocol::channel_view view, std::uint32_t start = 0)
      : view_(view), position_(start), published_(start) {}

  // The next message if all its entries are there. Never blocks.
  std::optional<channel_message> try_take();

  // Publishes the read position now; call when there is nothing to take, so that producers
  // waiting for room are released without waiting for a quarter ring to be read.
  void publish_position();

 private:
  std::optional<channel_message> try_take_compact();
  void advance(std::uint32_t entries);

  protocol::channel_view view_;
  std::uint32_t position_;
  std::uint32_t published_;
};

}  // namespace dcuda::runtime
