// Host side of a device->host channel (protocol/command_channel.h): takes complete messages in
// ticket order and tells producers, lazily, how far it has read.
#pragma once

#include <optional>
#include <string>

#include "dcuda/detail/protocol/command_channel.h"
#include "transport/message_checks.h"

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
  // `ranks`: the producers' world ranks (this GPU's) and the job's world size, which every
  // message is checked against (checks::check_channel_entry; the ring's capacity is the view's).
  // `start`: the ticket producers start from (0 after a reset).
  channel_consumer(protocol::channel_view view, const checks::channel_limits& ranks,
                   std::uint32_t start = 0)
      : view_(view), limits_(ranks), position_(start), published_(start) {
    limits_.capacity = view.capacity;
  }

  // The next message if all its entries are there. Never blocks. A malformed message (unknown
  // type, a rank not of this GPU, more entries than the ring or its type holds, a compact
  // operation that does not check) throws runtime::error (DCUDA_ERROR_INTERNAL) before anything
  // of it is used; it is not taken.
  std::optional<channel_message> try_take();

  // Publishes the read position now; call when there is nothing to take, so that producers
  // waiting for room are released without waiting for a quarter ring to be read.
  void publish_position();

 private:
  std::optional<channel_message> try_take_compact();
  void advance(std::uint32_t entries);

  protocol::channel_view view_;
  checks::channel_limits limits_;
  std::uint32_t position_;
  std::uint32_t published_;
};

}  // namespace dcuda::runtime
