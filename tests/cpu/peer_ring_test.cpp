// Peer rings (protocol/peer_ring.h): records round-trip, a record is taken only when both words
// carry its ticket's stamp, and a ring shared by several senders (one ticket counter, as the
// ranks of one GPU share it) delivers every record once, each sender's in its order, with the
// data of regular puts visible, while senders wait for room in a full ring. Host threads stand in
// for the ranks, following device/peer_ring.cuh and device/ring_poll.cuh step by step.
#include <atomic>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/peer_ring.h"
#include "test_main.h"

namespace {

using namespace dcuda::protocol;

DCUDA_TEST(ring_record_round_trips_every_field) {
  const ring_record sent{0x04030201u, 0x7ffffff0u, 255, 31, 4, false};
  const ring_words words = encode_ring_record(sent, 0xabcdef01u);
  DCUDA_CHECK(ring_record_complete(words, 0xabcdef01u));
  const ring_record got = decode_ring_record(words);
  DCUDA_CHECK_EQ(got.payload, sent.payload);
  DCUDA_CHECK_EQ(got.offset, sent.offset);
  DCUDA_CHECK_EQ(got.tag, 255);
  DCUDA_CHECK_EQ(got.window_slot, 31);
  DCUDA_CHECK_EQ(got.size, 4);
  DCUDA_CHECK(!got.fenced);
  const ring_record fenced =
      decode_ring_record(encode_ring_record({0, 0x7fffffffu, 7, 0, 0, true}, 5));
  DCUDA_CHECK_EQ(fenced.tag, 7);
  DCUDA_CHECK(fenced.fenced);
  DCUDA_CHECK_EQ(fenced.offset, 0x7fffffffu);  // the flag does not spill into the offset
}

DCUDA_TEST(ring_record_is_taken_only_with_its_tickets_stamp_in_both_words) {
  const ring_words old_record = encode_ring_record({1, 2, 3, 4, 1, false}, 5);
  const ring_words new_record = encode_ring_record({9, 8, 7, 6, 2, true}, 5 + ring_slots);
  DCUDA_CHECK(ring_record_complete(new_record, 5 + ring_slots));
  DCUDA_CHECK(!ring_record_complete(old_record, 5 + ring_slots));  // the slot's previous lap
  DCUDA_CHECK(!ring_record_complete({new_record.first, old_record.second}, 5 + ring_slots));
  DCUDA_CHECK(!ring_record_complete({old_record.first, new_record.second}, 5 + ring_slots));
  DCUDA_CHECK(!ring_record_complete({0, 0}, 0));  // a zeroed slot holds no record
  DCUDA_CHECK(!ring_record_complete({0, 0}, 0xffffffffu));
  DCUDA_CHECK(ring_record_complete(encode_ring_record({}, 0xffffffffu), 0xffffffffu));
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
  for (std::uint8_t size = 5; size <= 7; ++size) {
    DCUDA_CHECK(fault(0, size, 64) == ring_record_fault::payload_too_large);
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

// Three senders share one ticket counter and one target ring. Sender s sends `per_sender`
// notifications; message i of sender s either carries its value in the record (size 4) or, every
// third one, stores it into data[s][i] and then fences before a fenced record of size 0 (a
// regular put_notify). The target reads each record relaxed, again with acquire when it is
// fenced, takes records in ticket order and checks, for each, that the sender's messages arrive
// in order and that the data of a regular one is there.
DCUDA_TEST(a_shared_ring_delivers_every_senders_records_in_order) {
  constexpr int senders = 3;
  constexpr std::uint32_t per_sender = 20000;
  std::vector<ring_words> ring(ring_slots);
  std::uint32_t tail = 0, taken = 0;
  std::vector<std::vector<std::uint32_t>> data(senders, std::vector<std::uint32_t>(per_sender));
  const auto send = [&](int s) {
    for (std::uint32_t i = 0; i < per_sender; ++i) {
      const bool regular = i % 3 == 2;
      const std::uint32_t value = i + 1;
      if (regular) {
        system_atomic<std::uint32_t>(data[s][i]).store(value, cuda::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);  // fence.acq_rel.sys
      }
      const std::uint32_t ticket =
          system_atomic<std::uint32_t>(tail).fetch_add(1, cuda::memory_order_relaxed);
      while (!ring_has_room(ticket,
                            system_atomic<std::uint32_t>(taken).load(cuda::memory_order_relaxed))) {
      }
      // The tag says who sent it; the offset which message.
      const ring_words words =
          encode_ring_record({regular ? 0u : value, i, static_cast<std::uint8_t>(s), 0,
                              static_cast<std::uint8_t>(regular ? 0 : 4), regular},
                             ticket);
      ring_words& slot = ring[ring_slot(ticket)];
      system_atomic<std::uint64_t>(slot.second).store(words.second, cuda::memory_order_relaxed);
      system_atomic<std::uint64_t>(slot.first).store(words.first, cuda::memory_order_relaxed);
    }
  };
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s) threads.emplace_back(send, s);

  std::vector<std::uint32_t> next(senders, 0);
  std::uint32_t head = 0, wrong = 0;
  while (head < senders * per_sender) {
    ring_words& slot = ring[ring_slot(head)];
    const ring_words words{
        system_atomic<std::uint64_t>(slot.first).load(cuda::memory_order_relaxed),
        system_atomic<std::uint64_t>(slot.second).load(cuda::memory_order_relaxed)};
    if (!ring_record_complete(words, head)) continue;
    const ring_record record = decode_ring_record(words);
    if (record.fenced) {
      system_atomic<std::uint64_t>(slot.first).load(cuda::memory_order_acquire);
      system_atomic<std::uint64_t>(slot.second).load(cuda::memory_order_acquire);
    }
    const int s = record.tag;
    const std::uint32_t i = record.offset;
    const std::uint32_t value =
        record.size != 0
            ? record.payload
            : system_atomic<std::uint32_t>(data[s][i]).load(cuda::memory_order_relaxed);
    if (i != next[s] || value != i + 1) ++wrong;
    next[s] = i + 1;
    ++head;
    system_atomic<std::uint32_t>(taken).store(head, cuda::memory_order_relaxed);
  }
  for (auto& t : threads) t.join();
  DCUDA_CHECK_EQ(wrong, 0u);
  for (int s = 0; s < senders; ++s) DCUDA_CHECK_EQ(next[s], per_sender);
}

}  // namespace
