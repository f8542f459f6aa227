// libFuzzer target: the command channel's consumer (runtime/channel_consumer.h), which decodes
// what the device's ranks write into host memory: regular entries and compact operation entries
// (protocol/compact_operation.h). The input fills a small ring, which the consumer then drains.
//
// Input: one mode byte, then
//   even mode: the 7 fields of one compact entry (4 bytes each), stamped here with the sequence
//              the consumer expects, so that the fuzzer works on the fields and not on the stamps
//              (which only say whether the entry is complete);
//   odd mode:  up to `capacity` raw entries of entry_bytes each, whose sequence is set so that
//              the consumer finds each one complete at its ticket.
// A malformed entry may be refused (runtime::error); anything else the consumer does must be
// memory-safe and well defined, and a compact entry's message must hold what an entry can carry.
#include <cstdint>
#include <cstring>

#include "dcuda/detail/protocol/command_channel.h"
#include "dcuda/detail/protocol/compact_operation.h"
#include "fuzz_input.h"
#include "host_channel.h"
#include "runtime/channel_consumer.h"
#include "runtime/error.h"
#if DCUDA_FUZZ_MESSAGE_CHECKS
#include "transport/message_checks.h"
#endif

namespace {

using namespace dcuda::protocol;
constexpr std::uint32_t capacity = 8;

void fill_compact(dcuda_test::host_channel& channel, dcuda_fuzz::input& in) {
  compact_entry entry{};
  entry.words[0] = compact_head_word(entry_sequence(0));
  for (std::uint32_t i = 1; i < compact_words; ++i) {
    entry.words[i] = stamped_word(in.take<std::uint32_t>(), entry_sequence(0));
  }
  static_assert(sizeof entry == sizeof(channel_entry));
  std::memcpy(&channel.entries[0], &entry, sizeof entry);
}

void fill_raw(dcuda_test::host_channel& channel, dcuda_fuzz::input& in) {
  for (std::uint32_t i = 0; i < capacity && in.remaining() > 0; ++i) {
    const auto bytes = in.bytes(entry_bytes);
    std::memcpy(&channel.entries[i], bytes.data(), bytes.size());
    channel.entries[i].sequence = entry_sequence(i);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcuda_fuzz::input in(data, size);
  dcuda_test::host_channel channel(capacity);
  const bool compact = in.take<std::uint8_t>() % 2 == 0;
  if (compact) {
    fill_compact(channel, in);
  } else {
    fill_raw(channel, in);
  }
#if DCUDA_FUZZ_MESSAGE_CHECKS
  // The producers are world ranks 0..63 of a world of 64, as in the CPU tests.
  const dcuda::checks::channel_limits limits{0, 64, capacity, 64};
  // The validators on the raw bytes, as the consumer calls them.
  const auto first = std::as_bytes(std::span(&channel.entries[0], 1));
  (void)dcuda::checks::check_channel_entry(first, limits);
  (void)dcuda::checks::check_compact_entry(first, limits);
  dcuda::runtime::channel_consumer consumer(channel.view, limits);
#else
  dcuda::runtime::channel_consumer consumer(channel.view);
#endif
  try {
    for (std::uint32_t taken = 0; taken < capacity; ++taken) {
      const auto message = consumer.try_take();
      if (!message) break;
      // A compact entry becomes the operation (in a whole entry's payload) and at most
      // compact_payload_bytes of inline payload.
      if (compact &&
          message->text.size() > entry_payload_bytes + std::size_t{compact_payload_bytes}) {
        dcuda_fuzz::violated("a compact entry gave a message longer than an entry can carry");
      }
    }
  } catch (const dcuda::runtime::error&) {
    // Refused: the consumer named what was malformed.
  }
  return 0;
}
