// Notifications between GPUs of a node (docs/design.md, "Peer rings"). A notification a rank
// sends to a rank on another GPU of the node (dcuda_notify, dcuda_put_notify) is a 16-byte
// record in a ring of the target, one ring per (target rank, sending GPU), or a count beside it
// (below). A sending rank takes a
// ticket from a counter in its own GPU's memory (one device atomic), writes the record into slot
// ticket % ring_slots with one 16-byte store, and is done. The target polls the head slot of each
// of its rings; the record it finds carries everything, so taking it costs no further load (and
// an acquire fence when it is fenced, below).
//
// A put_notify of at most ring_carry_limit bytes carries its payload and needs no fence: the
// first 8 bytes in the record itself, the rest in continuation slots right after it (the next
// tickets, taken with the record's by one atomic), 8 bytes each, every 8-byte word with its
// slot's stamp, as in NCCL's LL protocol. The target lands the bytes in its window when it takes
// the record, once every continuation slot is complete. Larger puts copy their data first and
// fence (release, system scope) before the record, so the data is visible to a target that
// acquires (an acquire fence) after its relaxed load saw the record. A record also needs that fence
// when the rank did a plain put to a peer GPU since its last fence, so that no record overtakes
// earlier data (in-order delivery per target). A fenced record says so, and only such a record is
// acquired: an acquire invalidates the reader's whole L1 cache, which a notification that follows
// no data would pay for nothing.
//
// Each 8-byte word of a slot carries the stamp of its ticket's lap (6 bits), so a reader that
// finds the stamp it expects in both words has the whole slot (8-byte stores are single-copy
// atomic). A lap's stamp is enough: before a sender writes ticket t, the target has taken ticket
// t - ring_slots from the same slot (ring_has_room), so the slot holds either that lap's words or
// t's.
//
// A put_notify larger than ring_carry_limit, whose data is stored and fenced anyway, notifies
// without a record when it can: it adds one to the target's counter of its tag in the ring's
// counted area (ring_counter_offset) with a reduction after the fence, as a flag protocol does,
// and the target reads those counters beside its own. The ring's ticket and record, and the
// target's work to take a record, are then off its path. Order per target holds by two rules:
// a sender counts only when every record of its GPU to that target has been taken
// (ring_fully_taken: an earlier record would otherwise be counted after the later count), and
// the first record after a count is fenced (the record must not overtake the count).
//
// Who writes what:
//   rings   senders (relaxed 16-byte stores); the owner reads (relaxed, then an acquire fence
//           when the record is fenced)
//   counted senders (relaxed system-scope reductions after a release fence); the owner reads
//           (relaxed, then an acquire fence once the sum of its counters shows more)
//   tails   the ranks of the sending GPU (device atomics): tickets per target rank
//   taken   the target rank (relaxed system-scope stores): how far it has taken its ring of this
//           GPU; the senders read it when the ring looks full
#pragma once

#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

inline constexpr std::uint32_t ring_slots = 256;  // records per ring, a power of two
inline constexpr std::uint32_t ring_record_bytes = 16;
// After the slots: one 32-bit counter per tag of the notifications counted without a record.
inline constexpr std::uint64_t ring_counted_bytes = std::uint64_t{tag_count} * 4u;
inline constexpr std::uint64_t ring_bytes =
    std::uint64_t{ring_slots} * ring_record_bytes + ring_counted_bytes;
inline constexpr int record_payload_bytes = 8;        // payload bytes the record itself carries
inline constexpr int continuation_payload_bytes = 8;  // payload bytes of a continuation slot
inline constexpr int ring_carry_limit = 16;           // payload bytes a put_notify carries at most
inline constexpr std::uint32_t max_peer_gpus = 15;    // other GPUs of a node a rank has rings for

// Continuation slots after the record of a put_notify that carries `size` bytes.
DCUDA_HD constexpr std::uint32_t continuation_slots(std::uint32_t size) {
  return size <= static_cast<std::uint32_t>(record_payload_bytes)
             ? 0u
             : (size - record_payload_bytes + continuation_payload_bytes - 1) /
                   continuation_payload_bytes;
}
inline constexpr std::uint32_t max_continuation_slots = continuation_slots(ring_carry_limit);

struct ring_record {
  std::uint64_t payload;  // the put's first 8 bytes, in the order they sit in memory
  std::uint32_t offset;   // into the target's window (payload bytes only; below 2^31)
  std::uint8_t tag;
  std::uint8_t window_slot;
  std::uint8_t size;  // payload bytes, 0..ring_carry_limit; 0: a notification alone
  bool fenced;        // data the sender stored before the record must be acquired
};

// The stamp of ticket t's lap, in the top 6 bits of every word of its slot: never 0 in the first
// lap (a zeroed slot holds no record), and different in consecutive laps, across the tickets'
// wraparound too (2^32 / ring_slots laps, a multiple of 64).
inline constexpr int stamp_shift = 58;
DCUDA_HD constexpr std::uint32_t ring_stamp(std::uint32_t ticket) {
  return (ticket / ring_slots + 1u) & 63u;
}
static_assert((std::uint64_t{1} << 32) / ring_slots % 64 == 0);

struct ring_words {
  std::uint64_t first, second;
};

// first: stamp (6) | offset bits 26-30 (5) | fenced (1) | window slot (5) | size (7) | tag (8) |
// payload bytes 0-3 (32); second: stamp (6) | offset bits 0-25 (26) | payload bytes 4-7 (32).
// (Window sizes are ints, so an offset fits 31 bits.)
DCUDA_HD constexpr ring_words encode_ring_record(const ring_record& record, std::uint32_t ticket) {
  const std::uint64_t stamp = std::uint64_t{ring_stamp(ticket)} << stamp_shift;
  const std::uint32_t fields = (record.offset >> 26 & 31u) << 21 | (record.fenced ? 1u : 0u) << 20 |
                               (std::uint32_t{record.window_slot} & 31u) << 15 |
                               (std::uint32_t{record.size} & 127u) << 8 | record.tag;
  return {stamp | std::uint64_t{fields} << 32 | (record.payload & 0xffffffffu),
          stamp | std::uint64_t{record.offset & 0x3ffffffu} << 32 | record.payload >> 32};
}

// Whether both words of ticket's record have arrived.
DCUDA_HD constexpr bool ring_record_complete(const ring_words& words, std::uint32_t ticket) {
  const std::uint32_t stamp = ring_stamp(ticket);
  return (words.first >> stamp_shift) == stamp && (words.second >> stamp_shift) == stamp;
}

// A continuation slot (ticket: the record's + 1, 2, ...): its 8 payload bytes, 4 in each word
// beside a stamp and the ticket's low 26 bits, so each word shows by itself that it has arrived.
// The mark: the high half of each word of continuation slot `ticket`. Its stamp is the lap's with
// the top bit flipped: a record's stamp is never a continuation's of the same lap or of the lap
// before (stamp + 1 differs from stamp ^ 32 mod 64), nor the other way round, so neither kind of
// slot is taken for the other, and a stale slot of either kind is complete as neither.
inline constexpr std::uint32_t continuation_stamp_flip = 32u;
DCUDA_HD constexpr std::uint64_t continuation_mark(std::uint32_t ticket) {
  const std::uint64_t stamp = ring_stamp(ticket) ^ continuation_stamp_flip;
  return (stamp << 26 | (ticket & 0x3ffffffu)) << 32;
}
DCUDA_HD constexpr ring_words encode_continuation(std::uint32_t low, std::uint32_t high,
                                                  std::uint32_t ticket) {
  const std::uint64_t mark = continuation_mark(ticket);
  return {mark | low, mark | high};
}
DCUDA_HD constexpr bool continuation_complete(const ring_words& words, std::uint32_t ticket) {
  const std::uint64_t mark = continuation_mark(ticket);
  return (words.first & 0xffffffff00000000u) == mark &&
         (words.second & 0xffffffff00000000u) == mark;
}

DCUDA_HD constexpr ring_record decode_ring_record(const ring_words& words) {
  const auto fields = static_cast<std::uint32_t>(words.first >> 32);
  const auto offset_low = static_cast<std::uint32_t>(words.second >> 32) & 0x3ffffffu;
  return {(words.first & 0xffffffffu) | (words.second & 0xffffffffu) << 32,
          (fields >> 21 & 31u) << 26 | offset_low,
          static_cast<std::uint8_t>(fields),
          static_cast<std::uint8_t>(fields >> 15 & 31u),
          static_cast<std::uint8_t>(fields >> 8 & 127u),
          (fields >> 20 & 1u) != 0u};
}

// What a target rank refuses in a complete record it took (the sender is another process: its
// record is checked before its payload lands): a payload wider than a put_notify carries, or one
// outside the target's window of `window_size` bytes. A record without a payload writes nothing.
enum class ring_record_fault : std::uint8_t { none, payload_too_large, outside_window };
DCUDA_HD constexpr ring_record_fault ring_record_fault_of(const ring_record& record,
                                                          std::uint32_t window_size) {
  if (record.size > ring_carry_limit) return ring_record_fault::payload_too_large;
  if (record.size != 0u &&
      (record.offset > window_size || record.size > window_size - record.offset)) {
    return ring_record_fault::outside_window;
  }
  return ring_record_fault::none;
}

// Whether ticket `ticket` may be written while the target has taken `taken` records.
DCUDA_HD constexpr bool ring_has_room(std::uint32_t ticket, std::uint32_t taken) {
  return ticket - taken < ring_slots;
}

DCUDA_HD constexpr std::uint32_t ring_slot(std::uint32_t ticket) {
  return ticket % ring_slots;
}

// Where, from the start of a ring, the counter of `tag`'s notifications counted without a record
// lies.
DCUDA_HD constexpr std::uint64_t ring_counter_offset(std::uint32_t tag) {
  return std::uint64_t{ring_slots} * ring_record_bytes + std::uint64_t{tag} * 4u;
}

// Which targets a rank's next record must make acquire (a fenced record), after a plain put or a
// count to them that no acquire has covered yet: none (0), one (its ring slot + 1), or several
// (acquire_owed_many). A fence of the sender after those writes orders them before any later
// record; a target still has to acquire to see them, once, in the next record it takes from
// this rank. Thread 0 of a rank keeps this word for itself (dcuda_state::peer_acquire_owed).
inline constexpr std::uint32_t acquire_owed_many = 0xffffffffu;
DCUDA_HD constexpr std::uint32_t owe_acquire(std::uint32_t owed, std::uint32_t slot) {
  return owed == 0u || owed == slot + 1u ? slot + 1u : acquire_owed_many;
}
DCUDA_HD constexpr bool acquire_owed_to(std::uint32_t owed, std::uint32_t slot) {
  return owed == slot + 1u || owed == acquire_owed_many;
}
// What is still owed once a fenced record has gone to `slot` ("several" stays: the others may
// still be owed).
DCUDA_HD constexpr std::uint32_t acquire_paid(std::uint32_t owed, std::uint32_t slot) {
  return owed == slot + 1u ? 0u : owed;
}

// Whether the target has taken every record of the sending GPU (`tail`: the GPU's next ticket for
// it, read after the sender's own tickets; `taken`: how far the target has taken the ring). Only
// then may a notification be counted without a record: it must not be counted ahead of a record
// of the same sender still in the ring.
DCUDA_HD constexpr bool ring_fully_taken(std::uint32_t tail, std::uint32_t taken) {
  return tail == taken;
}

// A process's ring memory, exported to the other processes of its node: [ranks][peer GPUs] rings,
// then the tickets and taken positions of this GPU as a sender, one per slot (a slot: a rank of
// another process of the node, numbered in process order), then the board of the world barrier
// within a node, one 8-byte word per peer GPU (protocol/node_barrier.h).
struct ring_memory_layout {
  std::uint32_t ranks;
  std::uint32_t peer_gpus;
  std::uint32_t slots;

  DCUDA_HD constexpr std::uint64_t ring(std::uint32_t rank, std::uint32_t peer) const {
    return (std::uint64_t{rank} * peer_gpus + peer) * ring_bytes;
  }
  DCUDA_HD constexpr std::uint64_t tails() const { return ring(ranks, 0); }
  DCUDA_HD constexpr std::uint64_t taken() const { return tails() + slots * 4ull; }
  DCUDA_HD constexpr std::uint64_t board() const { return (taken() + slots * 4ull + 7u) & ~7ull; }
  DCUDA_HD constexpr std::uint64_t bytes() const { return board() + peer_gpus * 8ull; }
};

}  // namespace dcuda::protocol
