// A small network operation (a notify, or a put of at most compact_payload_bytes) as one
// command-channel entry written as stamped words (protocol/stamped_word.h), so that the rank
// hands it to its proxy without a release fence. The fence of the regular entry
// (publish_entries) waits for every earlier store to host memory to be acknowledged across PCIe;
// on the latency path that wait is the largest part of a send.
//
// Word 0 is the entry's usual head: the sequence (entry_sequence) in its low half, type and entry
// count in its high half, so the consumer finds the entry the usual way (ready_entry). Words 1..7
// carry one 32-bit field each, stamped with the same sequence. The consumer takes the entry when
// every word shows the sequence, and hands it on as a regular remote_operation message. Word 7
// carries the whole window slot (-1: none), since host windows' slots reach 255.
#pragma once

#include "dcuda/detail/protocol/command_channel.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/remote_operation.h"
#include "dcuda/detail/protocol/stamped_word.h"

namespace dcuda::protocol {

inline constexpr std::uint32_t compact_words = entry_bytes / sizeof(std::uint64_t);
inline constexpr int compact_payload_bytes = 8;

// Whether an operation travels as a compact entry: no payload, or one that fits in two fields.
// Its operation_id is always 0 (nothing is left for the proxy to copy out, so nothing to
// acknowledge).
DCUDA_HD constexpr bool fits_compact_entry(operation_kind kind, int size) {
  return kind == operation_kind::notify || size <= compact_payload_bytes;
}

// The 64-bit head word: what the regular entry's first 8 bytes hold (sequence, type, entries).
DCUDA_HD constexpr std::uint64_t compact_head_word(std::uint32_t sequence) {
  const std::uint32_t type_and_entries =
      static_cast<std::uint32_t>(message_type::remote_operation_compact) | 1u << 16;
  return static_cast<std::uint64_t>(type_and_entries) << 32 | sequence;
}

// Field 2 packs what fits in a byte each: kind, tag, payload size.
DCUDA_HD constexpr std::uint32_t pack_small_fields(const remote_operation& op) {
  return (static_cast<std::uint32_t>(op.kind) & 0xffu) |
         (static_cast<std::uint32_t>(op.tag) & 0xffu) << 8 |
         (static_cast<std::uint32_t>(op.size) & 0xffu) << 24;
}

// The entry's 8 words for `op` (payload: the first op.size bytes of `payload`, lowest byte
// first) under `sequence`.
struct compact_entry {
  std::uint64_t words[compact_words];
};
DCUDA_HD constexpr compact_entry encode_compact_operation(const remote_operation& op,
                                                          std::uint64_t payload,
                                                          std::uint32_t sequence) {
  const std::uint32_t fields[compact_words] = {0,
                                               static_cast<std::uint32_t>(op.source_rank),
                                               pack_small_fields(op),
                                               static_cast<std::uint32_t>(op.target_rank),
                                               static_cast<std::uint32_t>(op.offset),
                                               static_cast<std::uint32_t>(payload),
                                               static_cast<std::uint32_t>(payload >> 32),
                                               static_cast<std::uint32_t>(op.window)};
  compact_entry entry{};
  entry.words[0] = compact_head_word(sequence);
  for (std::uint32_t i = 1; i < compact_words; ++i)
    entry.words[i] = stamped_word(fields[i], sequence);
  return entry;
}

// The consumer's side: false while some word still lacks `sequence` (it is on its way). Word 0
// is not looked at: the caller found the entry by it.
DCUDA_HD constexpr bool decode_compact_operation(const compact_entry& entry, std::uint32_t sequence,
                                                 remote_operation& op, std::uint64_t& payload) {
  for (std::uint32_t i = 1; i < compact_words; ++i) {
    if (!word_has_stamp(entry.words[i], sequence)) return false;
  }
  const std::uint32_t small = stamped_field(entry.words[2]);
  op = remote_operation{static_cast<std::int32_t>(small & 0xffu),
                        static_cast<std::int32_t>(stamped_field(entry.words[1])),
                        static_cast<std::int32_t>(stamped_field(entry.words[3])),
                        static_cast<std::int32_t>(stamped_field(entry.words[7])),
                        static_cast<std::int64_t>(stamped_field(entry.words[4])),
                        static_cast<std::int64_t>(small >> 24),
                        static_cast<std::int32_t>(small >> 8 & 0xffu),
                        0};
  payload = static_cast<std::uint64_t>(stamped_field(entry.words[6])) << 32 |
            stamped_field(entry.words[5]);
  return true;
}

}  // namespace dcuda::protocol
