// Peer rings (protocol/peer_ring.h): records round-trip, a record is taken only when both words
// carry the stamp of its ticket's lap, and a ring shared by several senders (one ticket counter, as
// the ranks of one GPU share it) delivers every record once, each sender's in its order, with the
// data of regular puts visible and every byte of carried ones, while senders wait for room in a
// full ring. Host threads stand in for the ranks, following device/peer_ring.cuh and
// device/ring_poll.cuh step by step.
#include <atomic>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/peer_ring.h"
#include "test_main.h"

namespace {

using namespace dcuda::protocol;

DCUDA_TEST(ring_record_round_trips_every_field) {
  const ring_record sent{0x0807060504030201u, 0x7ffffff0u, 255, 31, 8, false};
  const ring_words words = encode_ring_record(sent, 0xabcdef01u);
  DCUDA_CHECK(ring_record_complete(words, 0xabcdef01u));
  const ring_record got = decode_ring_record(words);
  DCUDA_CHECK_EQ(got.payload, sent.payload);
  DCUDA_CHECK_EQ(got.offset, sent.offset);
  DCUDA_CHECK_EQ(got.tag, 255);
  DCUDA_CHECK_EQ(got.window_slot, 31);
  DCUDA_CHECK_EQ(got.size, 8);
  DCUDA_CHECK(!got.fenced);
  const ring_record fenced =
      decode_ring_record(encode_ring_record({0, 0x7fffffffu, 7, 0, 0, true}, 5));
  DCUDA_CHECK_EQ(fenced.tag, 7);
  DCUDA_CHECK(fenced.fenced);
  DCUDA_CHECK_EQ(fenced.offset, 0x7fffffffu);  // the flag does not spill into the offset
  // The offset's two parts (bits 0-25 and 26-30 sit in different words) and the payload's two
  // halves come back apart from each other.
  for (const std::uint32_t offset : {0x3ffffffu, 0x4000000u, 0x7c000000u, 0x12345678u}) {
    const ring_record back =
        decode_ring_record(encode_ring_record({~std::uint64_t{0}, offset, 0, 0, 16, false}, 9));
    DCUDA_CHECK_EQ(back.offset, offset);
    DCUDA_CHECK_EQ(back.payload, ~std::uint64_t{0});
    DCUDA_CHECK_EQ(back.size, 16);
    DCUDA_CHECK(!back.fenced);
  }
}

DCUDA_TEST(ring_record_is_taken_only_with_its_tickets_stamp_in_both_words) {
  const ring_words old_record = encode_ring_record({1, 2, 3, 4, 1, false}, 5);
  const ring_words new_record = encode_ring_record({9, 8, 7, 6, 2, true}, 5 + ring_slots);
  DCUDA_CHECK(ring_record_complete(new_record, 5 + ring_slots));
  DCUDA_CHECK(!ring_record_complete(old_record, 5 + ring_slots));  // the slot's previous lap
  DCUDA_CHECK(!ring_record_complete({new_record.first, old_record.second}, 5 + ring_slots));
  DCUDA_CHECK(!ring_record_complete({old_record.first, new_record.second}, 5 + ring_slots));
  // A zeroed slot holds no record of the first lap, the only lap that can find one zeroed.
  for (std::uint32_t ticket = 0; ticket < ring_slots; ++ticket) {
    DCUDA_CHECK(!ring_record_complete({0, 0}, ticket));
  }
  // Every lap's stamp differs from the lap before it, across the tickets' wraparound too.
  for (std::uint32_t lap = 0; lap < 200; ++lap) {
    DCUDA_CHECK(ring_stamp(lap * ring_slots) != ring_stamp((lap + 1) * ring_slots));
  }
  DCUDA_CHECK(ring_stamp(0xffffffffu) != ring_stamp(0));
  DCUDA_CHECK(ring_record_complete(encode_ring_record({}, 0xffffffffu), 0xffffffffu));
  DCUDA_CHECK(!ring_record_complete(encode_ring_record({}, 0xffffffffu - ring_slots), 0xffffffffu));
  DCUDA_CHECK(!ring_record_complete(encode_ring_record({}, 0xffffffffu), ring_slots - 1));
  DCUDA_CHECK(ring_has_room(ring_slots - 1, 0));
  DCUDA_CHECK(!ring_has_room(ring_slots, 0));
  DCUDA_CHECK(ring_has_room(0xffffffffu, 0xffffffffu - ring_slots + 1));  // across wraparound
}

DCUDA_TEST(ring_records_are_refused_when_wider_than_a_record_or_outside_the_window) {
  const auto fault = [](std::uint32_t offset, std::uint8_t size, std::uint32_t window) {
    return ring_record_fault_of({0u, offset, 9, 3, size, false}, window);
  };
  DCUDA_CHECK(fault(60, 4, 64) == ring_record_fault::none);  // ends exactly at the window's end
  DCUDA_CHECK(fault(61, 4, 64) == ring_record_fault::outside_window);
  DCUDA_CHECK(fault(64, 1, 64) == ring_record_fault::outside_window);
  DCUDA_CHECK(fault(0x7fffffffu, 4, 64) == ring_record_fault::outside_window);
  DCUDA_CHECK(fault(0, 1, 0) == ring_record_fault::outside_window);  // an empty window
  DCUDA_CHECK(fault(0x7fffffffu, 0, 0) == ring_record_fault::none);  // a notification alone
  // The longest payload the ring carries (in the record and its continuation slot).
  DCUDA_CHECK(fault(64 - ring_carry_limit, ring_carry_limit, 64) == ring_record_fault::none);
  DCUDA_CHECK(fault(65 - ring_carry_limit, ring_carry_limit, 64) ==
              ring_record_fault::outside_window);
  DCUDA_CHECK(fault(56, 8, 64) == ring_record_fault::none);
  DCUDA_CHECK(fault(57, 8, 64) == ring_record_fault::outside_window);
  for (std::uint8_t size = ring_carry_limit + 1; size <= 127; ++size) {
    DCUDA_CHECK(fault(0, size, 256) == ring_record_fault::payload_too_large);
  }
}

DCUDA_TEST(continuation_slots_carry_every_byte_past_the_records_eight) {
  DCUDA_CHECK_EQ(continuation_slots(0), 0u);
  DCUDA_CHECK_EQ(continuation_slots(8), 0u);
  DCUDA_CHECK_EQ(continuation_slots(9), 1u);
  DCUDA_CHECK_EQ(continuation_slots(16), 1u);
  DCUDA_CHECK_EQ(continuation_slots(17), 2u);
  DCUDA_CHECK_EQ(continuation_slots(ring_carry_limit), max_continuation_slots);
  DCUDA_CHECK(record_payload_bytes + continuation_payload_bytes * max_continuation_slots >=
              static_cast<std::uint32_t>(ring_carry_limit));
  // The record's size field holds every carried size, and the fields beside it keep their values.
  const ring_record longest =
      decode_ring_record(encode_ring_record({0, 0x7fffffffu, 255, 31, ring_carry_limit, true}, 77));
  DCUDA_CHECK_EQ(longest.size, ring_carry_limit);
  DCUDA_CHECK_EQ(longest.tag, 255);
  DCUDA_CHECK_EQ(longest.window_slot, 31);
  DCUDA_CHECK_EQ(longest.offset, 0x7fffffffu);
  DCUDA_CHECK(longest.fenced);

  const ring_words slot = encode_continuation(0x11223344u, 0x55667788u, 1000);
  DCUDA_CHECK(continuation_complete(slot, 1000));
  DCUDA_CHECK_EQ(static_cast<std::uint32_t>(slot.first), 0x11223344u);
  DCUDA_CHECK_EQ(static_cast<std::uint32_t>(slot.second), 0x55667788u);
  const ring_words lap_before = encode_continuation(1, 2, 1000 - ring_slots);
  DCUDA_CHECK(!continuation_complete(lap_before, 1000));
  DCUDA_CHECK(!continuation_complete({slot.first, lap_before.second}, 1000));
  DCUDA_CHECK(!continuation_complete({lap_before.first, slot.second}, 1000));
  DCUDA_CHECK(!continuation_complete({0, 0}, 0));
  // The same lap's stamp is not enough: the ticket's low bits must match too.
  DCUDA_CHECK(!continuation_complete(encode_continuation(1, 2, 1001), 1000));
  // A record is never taken for a continuation slot of the same ticket, nor the other way round,
  // even one whose fields equal the slot's mark.
  DCUDA_CHECK(!continuation_complete(encode_ring_record({1, 2, 3, 4, 5, false}, 1000), 1000));
  DCUDA_CHECK(!continuation_complete(
      encode_ring_record({0, 1000 & 0x3ffffffu, 1000 & 255u, 0, 0, false}, 1000), 1000));
  DCUDA_CHECK(!ring_record_complete(encode_continuation(1, 2, 1000), 1000));
  // Whatever the slot held a lap before, record or continuation, is complete as neither.
  for (const std::uint32_t ticket : {0u, 255u, 256u, 1000u, 0xffffffffu, 0xffffff00u}) {
    const std::uint32_t before = ticket - ring_slots;
    DCUDA_CHECK(!ring_record_complete(encode_ring_record({}, before), ticket));
    DCUDA_CHECK(!ring_record_complete(encode_continuation(0, 0, before), ticket));
    DCUDA_CHECK(!continuation_complete(encode_ring_record({}, before), ticket));
    DCUDA_CHECK(!continuation_complete(encode_continuation(0, 0, before), ticket));
  }
}

DCUDA_TEST(ring_memory_regions_do_not_overlap) {
  const ring_memory_layout layout{132, 3, 396};
  DCUDA_CHECK_EQ(layout.ring(0, 1), ring_bytes);
  DCUDA_CHECK_EQ(layout.ring(1, 0), 3 * ring_bytes);
  DCUDA_CHECK(layout.tails() >= layout.ring(131, 2) + ring_bytes);
  DCUDA_CHECK(layout.taken() >= layout.tails() + 396 * 4);
  DCUDA_CHECK(layout.bytes() >= layout.taken() + 396 * 4);
}

// Byte j of the payload of sender s's message i (a carried put).
std::uint8_t payload_byte(int s, std::uint32_t i, std::uint32_t j) {
  return static_cast<std::uint8_t>(i * 7u + j * 13u + static_cast<std::uint32_t>(s) + 1u);
}
// Bytes [4w, 4w + 4) of that payload, little-endian as the device gathers them (0 past `size`).
std::uint32_t payload_word(int s, std::uint32_t i, std::uint32_t size, std::uint32_t w) {
  std::uint32_t word = 0;
  for (std::uint32_t j = 0; j < 4; ++j) {
    if (4 * w + j < size) word |= std::uint32_t{payload_byte(s, i, 4 * w + j)} << (8 * j);
  }
  return word;
}

void store_slot(ring_words& slot, const ring_words& words) {
  system_atomic<std::uint64_t>(slot.second).store(words.second, cuda::memory_order_relaxed);
  system_atomic<std::uint64_t>(slot.first).store(words.first, cuda::memory_order_relaxed);
}
ring_words load_slot(ring_words& slot) {
  return {system_atomic<std::uint64_t>(slot.first).load(cuda::memory_order_relaxed),
          system_atomic<std::uint64_t>(slot.second).load(cuda::memory_order_relaxed)};
}

// Three senders share one ticket counter and one target ring. Sender s sends `per_sender`
// notifications; message i of sender s either carries its payload in the ring (up to 8 bytes in
// the record, or 9 to ring_carry_limit bytes in the record and its continuation slots, whose
// tickets come with the record's from one fetch_add, the slots stored before the record as the
// device does) or, every third one, stores its value into data[s][i] and then fences before a
// fenced record of size 0 (a regular put_notify). The target reads each record relaxed, with an
// acquire fence after it when it is fenced, takes a record with continuation slots only once they
// are all complete, takes records in ticket order and checks, for each, that the sender's messages
// arrive in order with every byte of their payload.
DCUDA_TEST(a_shared_ring_delivers_every_senders_records_in_order) {
  constexpr int senders = 3;
  constexpr std::uint32_t per_sender = 20000;
  // The tickets start 40,000 before their wraparound, which they cross; the ring holds the records
  // of the lap before the first ticket, taken (a zeroed slot only exists in the first lap).
  constexpr std::uint32_t first_ticket = 0u - 40000u;
  std::vector<ring_words> ring(ring_slots);
  for (std::uint32_t i = 0; i < ring_slots; ++i) {
    const std::uint32_t before = first_ticket - ring_slots + i;
    ring[ring_slot(before)] = encode_ring_record({}, before);
  }
  std::uint32_t tail = first_ticket, taken = first_ticket;
  std::vector<std::vector<std::uint32_t>> data(senders, std::vector<std::uint32_t>(per_sender));
  // Message i's payload size: 0 for a regular put, 1 .. 8 (in the record), or 9 ..
  // ring_carry_limit (with continuation slots).
  const auto size_of = [](std::uint32_t i) -> std::uint32_t {
    if (i % 3 == 2) return 0;
    return i % 3 == 0 ? 1u + i % 8 : 9u + i % (ring_carry_limit - 8);
  };
  const auto send = [&](int s) {
    for (std::uint32_t i = 0; i < per_sender; ++i) {
      const std::uint32_t size = size_of(i);
      const bool regular = size == 0;
      if (regular) {
        system_atomic<std::uint32_t>(data[s][i]).store(i + 1, cuda::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);  // fence.release.sys
      }
      const std::uint32_t continuations = continuation_slots(size);
      const std::uint32_t ticket = system_atomic<std::uint32_t>(tail).fetch_add(
          1 + continuations, cuda::memory_order_relaxed);
      while (!ring_has_room(ticket + continuations,
                            system_atomic<std::uint32_t>(taken).load(cuda::memory_order_relaxed))) {
      }
      for (std::uint32_t c = 1; c <= continuations; ++c) {
        store_slot(ring[ring_slot(ticket + c)],
                   encode_continuation(payload_word(s, i, size, 2 * c),
                                       payload_word(s, i, size, 2 * c + 1), ticket + c));
      }
      // The tag says who sent it; the offset which message.
      store_slot(
          ring[ring_slot(ticket)],
          encode_ring_record(
              {payload_word(s, i, size, 0) | std::uint64_t{payload_word(s, i, size, 1)} << 32, i,
               static_cast<std::uint8_t>(s), 0, static_cast<std::uint8_t>(size), regular},
              ticket));
    }
  };
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s) threads.emplace_back(send, s);

  std::vector<std::uint32_t> next(senders, 0);
  std::uint32_t head = first_ticket, wrong = 0, records = 0, carried = 0;
  while (records < senders * per_sender) {
    ring_words& slot = ring[ring_slot(head)];
    const ring_words words = load_slot(slot);
    if (!ring_record_complete(words, head)) continue;
    const ring_record record = decode_ring_record(words);
    if (record.fenced) {
      std::atomic_thread_fence(std::memory_order_acquire);  // fence.acquire.sys
    }
    const int s = record.tag;
    const std::uint32_t i = record.offset;
    const std::uint32_t continuations = continuation_slots(record.size);
    std::vector<std::uint32_t> received{static_cast<std::uint32_t>(record.payload),
                                        static_cast<std::uint32_t>(record.payload >> 32)};
    bool complete = true;
    for (std::uint32_t c = 1; c <= continuations; ++c) {
      const ring_words continuation = load_slot(ring[ring_slot(head + c)]);
      complete = complete && continuation_complete(continuation, head + c);
      received.push_back(static_cast<std::uint32_t>(continuation.first));
      received.push_back(static_cast<std::uint32_t>(continuation.second));
    }
    if (!complete) continue;  // taken on a later look, as the device does
    if (i != next[s] || record.size != size_of(i)) ++wrong;
    if (record.size == 0) {
      if (system_atomic<std::uint32_t>(data[s][i]).load(cuda::memory_order_relaxed) != i + 1) {
        ++wrong;
      }
    } else {
      for (std::uint32_t w = 0; 4 * w < record.size; ++w) {
        if (received[w] != payload_word(s, i, record.size, w)) ++wrong;
      }
    }
    if (continuations != 0) ++carried;
    next[s] = i + 1;
    head += 1 + continuations;
    ++records;
    system_atomic<std::uint32_t>(taken).store(head, cuda::memory_order_relaxed);
  }
  for (auto& t : threads) t.join();
  DCUDA_CHECK_EQ(wrong, 0u);
  for (int s = 0; s < senders; ++s) DCUDA_CHECK_EQ(next[s], per_sender);
  // Every message of 9 bytes or more came with continuation slots.
  std::uint32_t with_slots = 0;
  for (std::uint32_t i = 0; i < per_sender; ++i) with_slots += size_of(i) > 8 ? 1u : 0u;
  DCUDA_CHECK(with_slots > per_sender / 4);
  DCUDA_CHECK_EQ(carried, senders * with_slots);
}

// Notifications counted without a record, mixed with records, as device/peer_ring.cuh sends them
// and device/notification_wait.cuh reads them. Three senders share one ticket counter and one
// ring; sender s counts on the ring's counter of tag s. Message i of sender s is either a
// carried 4-byte put_notify (a record with its payload, fenced when a count came before it) or,
// every other one, data stored into data[s][i] and fenced, then counted when the tail it peeked
// before the data equals the taken position (ring_fully_taken), else a fenced record; now and
// then a sender waits until the ring is taken, as one that waited for an answer would. The
// target polls the head and the counters; a count is message next[s] of its sender and must find
// that message's data, and a record must be message next[s] once the counts seen after its
// acquire are taken: both fail when a count overtakes a record or a record a count.
DCUDA_TEST(counts_and_records_of_one_sender_arrive_in_issue_order) {
  constexpr int senders = 3;
  constexpr std::uint32_t per_sender = 20000;
  std::vector<ring_words> ring(ring_slots);
  std::uint32_t tail = 0, taken = 0;
  std::vector<std::uint32_t> counters(senders, 0);
  std::vector<std::vector<std::uint32_t>> data(senders, std::vector<std::uint32_t>(per_sender));
  std::vector<std::uint32_t> counted_sent(senders, 0), recorded_data(senders, 0);
  const auto send = [&](int s) {
    bool fence_owed = false;
    for (std::uint32_t i = 0; i < per_sender; ++i) {
      const bool data_message = i % 2 == 1 || i % 7 == 0;
      ring_record record{0, i, static_cast<std::uint8_t>(s), 0, 0, false};
      if (data_message && i % 10 == 1) {
        // Now and then the sender waits until the ring is taken (as a sender that waited for an
        // answer would find it), so that counts are sent while others send records.
        while (!ring_fully_taken(
            system_atomic<std::uint32_t>(tail).load(cuda::memory_order_relaxed),
            system_atomic<std::uint32_t>(taken).load(cuda::memory_order_relaxed))) {
        }
      }
      if (data_message) {
        const std::uint32_t peeked_tail =
            system_atomic<std::uint32_t>(tail).load(cuda::memory_order_relaxed);
        const std::uint32_t peeked_taken =
            system_atomic<std::uint32_t>(taken).load(cuda::memory_order_relaxed);
        system_atomic<std::uint32_t>(data[s][i]).store(i + 1, cuda::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);  // fence.release.sys
        if (ring_fully_taken(peeked_tail, peeked_taken)) {
          system_atomic<std::uint32_t>(counters[s]).fetch_add(1, cuda::memory_order_relaxed);
          fence_owed = true;
          ++counted_sent[s];
          continue;
        }
        record.fenced = true;
        ++recorded_data[s];
      } else {
        record.payload = payload_word(s, i, 4, 0);
        record.size = 4;
        if (fence_owed) {
          std::atomic_thread_fence(std::memory_order_release);
          record.fenced = true;
        }
      }
      fence_owed = false;
      const std::uint32_t ticket =
          system_atomic<std::uint32_t>(tail).fetch_add(1, cuda::memory_order_relaxed);
      while (!ring_has_room(ticket,
                            system_atomic<std::uint32_t>(taken).load(cuda::memory_order_relaxed))) {
      }
      store_slot(ring[ring_slot(ticket)], encode_ring_record(record, ticket));
    }
  };
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s) threads.emplace_back(send, s);

  std::vector<std::uint32_t> next(senders, 0), counted(senders, 0);
  std::uint32_t head = 0, wrong = 0, delivered = 0;
  // Takes the counts of sender s that have arrived: each is its next message, a data message
  // whose data must be there (the caller acquired after the loads that showed the counts).
  const auto take_counts = [&](int s, std::uint32_t seen) {
    for (; counted[s] != seen; ++counted[s], ++next[s], ++delivered) {
      const std::uint32_t i = next[s];
      if (i >= per_sender ||
          system_atomic<std::uint32_t>(data[s][i]).load(cuda::memory_order_relaxed) != i + 1) {
        ++wrong;
      }
    }
  };
  while (delivered < senders * per_sender) {
    std::vector<std::uint32_t> seen(senders);
    for (int s = 0; s < senders; ++s) {
      seen[s] = system_atomic<std::uint32_t>(counters[s]).load(cuda::memory_order_relaxed);
    }
    const ring_words words = load_slot(ring[ring_slot(head)]);
    std::atomic_thread_fence(std::memory_order_acquire);  // fence.acquire.sys
    for (int s = 0; s < senders; ++s) take_counts(s, seen[s]);
    if (!ring_record_complete(words, head)) continue;
    const ring_record record = decode_ring_record(words);
    const int s = record.tag;
    // Counts sent before this record are visible after the acquire that followed its load.
    take_counts(s, system_atomic<std::uint32_t>(counters[s]).load(cuda::memory_order_relaxed));
    const std::uint32_t i = record.offset;
    if (i != next[s]) ++wrong;
    if (record.size == 0) {
      if (system_atomic<std::uint32_t>(data[s][i]).load(cuda::memory_order_relaxed) != i + 1) {
        ++wrong;
      }
    } else if (record.payload != payload_word(s, i, 4, 0)) {
      ++wrong;
    }
    next[s] = i + 1;
    ++delivered;
    ++head;
    system_atomic<std::uint32_t>(taken).store(head, cuda::memory_order_relaxed);
  }
  for (auto& t : threads) t.join();
  DCUDA_CHECK_EQ(wrong, 0u);
  for (int s = 0; s < senders; ++s) {
    DCUDA_CHECK_EQ(next[s], per_sender);
    // Data messages went both ways: counted, and as fenced records.
    DCUDA_CHECK(counted_sent[s] > 0);
    DCUDA_CHECK(recorded_data[s] > 0);
  }
}

// What a rank owes the targets of its plain puts and counts: the next record to each of them is
// fenced (its target acquires), and a fenced record to one target pays only that one's debt.
DCUDA_TEST(acquires_owed_after_puts_and_counts_are_paid_per_target) {
  std::uint32_t owed = 0;
  DCUDA_CHECK(!acquire_owed_to(owed, 1));
  owed = owe_acquire(owed, 1);  // a count (or a plain put) to the target in slot 1
  DCUDA_CHECK(acquire_owed_to(owed, 1));
  DCUDA_CHECK(!acquire_owed_to(owed, 2));
  owed = acquire_paid(owed, 2);  // a fenced record to slot 2 does not pay slot 1's
  DCUDA_CHECK(acquire_owed_to(owed, 1));
  owed = owe_acquire(owed, 1);  // again to slot 1: still one target
  DCUDA_CHECK(!acquire_owed_to(owed, 0));
  owed = acquire_paid(owed, 1);
  DCUDA_CHECK_EQ(owed, 0u);
  // Two targets owed: every record is fenced from then on, whoever it goes to.
  owed = owe_acquire(owe_acquire(0, 3), 0);
  DCUDA_CHECK_EQ(owed, acquire_owed_many);
  owed = acquire_paid(owed, 3);
  DCUDA_CHECK(acquire_owed_to(owed, 0) && acquire_owed_to(owed, 3) && acquire_owed_to(owed, 9));
}

// The counted area of a ring lies past its slots, inside the ring's bytes.
DCUDA_TEST(ring_counters_lie_past_the_slots_inside_the_ring) {
  DCUDA_CHECK_EQ(ring_counter_offset(0), std::uint64_t{ring_slots} * ring_record_bytes);
  DCUDA_CHECK_EQ(ring_counter_offset(tag_count - 1) + 4, ring_bytes);
  DCUDA_CHECK(ring_fully_taken(7, 7));
  DCUDA_CHECK(!ring_fully_taken(8, 7));
  DCUDA_CHECK(ring_fully_taken(0, 0xffffffffu + 1u));
}

}  // namespace
