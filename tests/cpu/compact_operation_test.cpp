// Compact command-channel entries (protocol/compact_operation.h): the encoding round-trips every
// field, and the runtime's consumer takes such an entry only once every stamped word is there,
// in ticket order with regular messages. Host threads stand in for ranks; the consumer is the
// runtime's own.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/compact_operation.h"
#include "dcuda/detail/protocol/host_window_view.h"
#include "runtime/channel_consumer.h"
#include "host_channel.h"
#include "test_main.h"

namespace {

using namespace dcuda::protocol;

using dcuda_test::host_channel;

std::uint64_t* words_of(const channel_view& channel, std::uint32_t ticket) {
  return reinterpret_cast<std::uint64_t*>(&entry_at(channel, ticket));
}

// As the device writes it: every word on its own, here in reverse order (the head last, so the
// consumer sees the entry only when it is complete; see the partial test for the other order).
void store_compact(const channel_view& channel, std::uint32_t ticket, const remote_operation& op,
                   std::uint64_t payload) {
  const compact_entry entry = encode_compact_operation(op, payload, entry_sequence(ticket));
  std::uint64_t* to = words_of(channel, ticket);
  for (std::uint32_t i = compact_words; i-- > 0;) {
    system_atomic<std::uint64_t>(to[i]).store(entry.words[i], cuda::memory_order_relaxed);
  }
}

// What network_proxy::take_operation reads from a remote_operation message.
struct taken_operation {
  remote_operation op;
  std::string payload;
};
taken_operation read_message(const dcuda::runtime::channel_message& message) {
  DCUDA_CHECK(message.type == message_type::remote_operation);
  DCUDA_CHECK(message.text.size() >= entry_payload_bytes);
  taken_operation taken{};
  std::memcpy(&taken.op, message.text.data(), sizeof taken.op);
  taken.payload = message.text.substr(entry_payload_bytes);
  return taken;
}

remote_operation put_notify(int source, int target, int slot, int offset, int size, int tag) {
  return remote_operation{static_cast<std::int32_t>(operation_kind::put_notify),
                          source,
                          target,
                          slot,
                          offset,
                          size,
                          tag,
                          0};
}

}  // namespace

DCUDA_TEST(compact_entry_round_trips_every_field) {
  const remote_operation cases[] = {
      {static_cast<std::int32_t>(operation_kind::notify), 7, 262, -1, 0, 0, 255, 0},
      put_notify(0, 1, 0, 0, 1, 0),
      put_notify(130, 3, max_windows - 1, 0x7fffffff, compact_payload_bytes, 17),
      put_notify(4, 9, host_window_first_slot, 0, 1, 3),  // the host windows' slots
      put_notify(4, 9, host_window_first_slot + host_window_slots - 1, 12, 8, 255),
      {static_cast<std::int32_t>(operation_kind::put), 1 << 20, 5, 2, 64, 4, 0, 0},
  };
  const std::uint64_t payload = 0x0807060504030201ull;
  for (const remote_operation& sent : cases) {
    const std::uint32_t sequence = 0xfffffffeu;  // near wraparound on purpose
    const compact_entry entry = encode_compact_operation(sent, payload, sequence);
    DCUDA_CHECK_EQ(static_cast<std::uint32_t>(entry.words[0]),
                   sequence);  // where ready_entry looks
    remote_operation got{};
    std::uint64_t got_payload = 0;
    DCUDA_CHECK(decode_compact_operation(entry, sequence, got, got_payload));
    DCUDA_CHECK_EQ(got.kind, sent.kind);
    DCUDA_CHECK_EQ(got.source_rank, sent.source_rank);
    DCUDA_CHECK_EQ(got.target_rank, sent.target_rank);
    DCUDA_CHECK_EQ(got.window, sent.window);
    DCUDA_CHECK_EQ(got.offset, sent.offset);
    DCUDA_CHECK_EQ(got.size, sent.size);
    DCUDA_CHECK_EQ(got.tag, sent.tag);
    DCUDA_CHECK_EQ(got.operation_id, 0u);
    DCUDA_CHECK_EQ(got_payload, payload);
    DCUDA_CHECK(!decode_compact_operation(entry, sequence + 1, got, got_payload));
  }
}

DCUDA_TEST(compact_entry_holds_notifies_and_payloads_up_to_eight_bytes) {
  DCUDA_CHECK(fits_compact_entry(operation_kind::notify, 0));
  DCUDA_CHECK(fits_compact_entry(operation_kind::put, 0));
  DCUDA_CHECK(fits_compact_entry(operation_kind::put_notify, compact_payload_bytes));
  DCUDA_CHECK(!fits_compact_entry(operation_kind::put_notify, compact_payload_bytes + 1));
  DCUDA_CHECK(!fits_compact_entry(operation_kind::put, 4096));
}

DCUDA_TEST(compact_entry_is_not_taken_until_every_word_has_arrived) {
  host_channel channel(8);
  const std::uint32_t ticket = reserve_entries(channel.view, 1);
  const remote_operation op = put_notify(3, 9, 1, 40, 5, 6);
  const compact_entry entry = encode_compact_operation(op, 0x4443424140ull, entry_sequence(ticket));
  std::uint64_t* to = words_of(channel.view, ticket);
  dcuda::runtime::channel_consumer reader(channel.view, dcuda_test::test_ranks);
  // Head first, then the other words one by one: until the last is there, nothing is taken.
  to[0] = entry.words[0];
  for (std::uint32_t i = 1; i < compact_words; ++i) {
    DCUDA_CHECK(!reader.try_take().has_value());
    to[i] = entry.words[i];
  }
  const auto message = reader.try_take();
  DCUDA_CHECK(message.has_value());
  const taken_operation taken = read_message(*message);
  DCUDA_CHECK_EQ(message->rank, 3);
  DCUDA_CHECK_EQ(taken.op.target_rank, 9);
  DCUDA_CHECK_EQ(taken.payload, std::string("@ABCD"));
  DCUDA_CHECK(!reader.try_take().has_value());
}

DCUDA_TEST(compact_entry_with_a_word_from_the_previous_lap_is_not_taken) {
  host_channel channel(4);
  dcuda::runtime::channel_consumer reader(channel.view, dcuda_test::test_ranks);
  // Lap 0: slot 1 holds ticket 1's complete entry; lap 1 reuses it for ticket 5.
  for (std::uint32_t t = 0; t < 5; ++t) {
    const std::uint32_t ticket = reserve_entries(channel.view, 1);
    DCUDA_CHECK_EQ(ticket, t);
    store_compact(channel.view, ticket, put_notify(0, 1, 0, static_cast<int>(t), 1, 0), t);
    if (t < 4) {
      DCUDA_CHECK(reader.try_take().has_value());
      reader.publish_position();
    }
  }
  DCUDA_CHECK(reader.try_take().has_value());                     // ticket 4 (slot 0)
  const std::uint32_t ticket = reserve_entries(channel.view, 1);  // 5, slot 1
  const compact_entry entry =
      encode_compact_operation(put_notify(0, 1, 0, 99, 1, 0), 7, entry_sequence(ticket));
  std::uint64_t* to = words_of(channel.view, ticket);
  for (std::uint32_t i = 0; i < compact_words; ++i) {
    if (i != 4) to[i] = entry.words[i];  // word 4 (the offset) still holds ticket 1's
  }
  DCUDA_CHECK(!reader.try_take().has_value());
  to[4] = entry.words[4];
  const auto message = reader.try_take();
  DCUDA_CHECK(message.has_value());
  DCUDA_CHECK_EQ(read_message(*message).op.offset, 99);
}

// A producer of compact entries and regular two-entry messages, as a GPU's ranks send them; a
// named function so that ThreadSanitizer's suppression of the channel's slot reuse
// (tests/sanitizers/tsan.supp) names it.
static void send_mixed_as_device(const channel_view& channel, int p, int per_producer,
                                 const std::atomic<bool>& stop) {
  for (int s = 0; s < per_producer && !stop; ++s) {
    const std::uint32_t n = s % 3 == 0 ? 2u : 1u;
    const std::uint32_t first = reserve_entries(channel, n);
    std::uint32_t consumed = 0;
    while (!producer_has_room(channel, first, n, consumed)) {
      if (stop) return;
      std::this_thread::yield();
    }
    remote_operation op = put_notify(p, 0, 0, s, 8, p);
    const auto payload = static_cast<std::uint64_t>(s) << 8 | static_cast<std::uint64_t>(p);
    if (n == 1) {
      store_compact(channel, first, op, payload);
      continue;
    }
    // Regular: header and operation in the first entry, the payload in the second.
    for (std::uint32_t i = 0; i < n; ++i) {
      channel_entry& entry = entry_at(channel, first + i);
      entry.type = static_cast<std::uint16_t>(message_type::remote_operation);
      entry.entries = static_cast<std::uint16_t>(i == 0 ? n : 0);
      entry.rank = p;
      entry.aux = 0;
    }
    std::memcpy(entry_at(channel, first).payload, &op, sizeof op);
    std::memcpy(entry_at(channel, first + 1).payload, &payload, sizeof payload);
    for (std::uint32_t i = 0; i < n; ++i) publish_entry(entry_at(channel, first + i), first + i);
  }
}

// Producers mix compact entries with regular two-entry messages; the consumer sees every
// operation, in each producer's order, with its own payload.
DCUDA_TEST(compact_and_regular_entries_keep_each_producers_order) {
  constexpr int producers = 4;
  constexpr int per_producer = 3000;
  host_channel channel(16, 0xfffffff0u);
  std::atomic<bool> go{false}, stop{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      while (!go) std::this_thread::yield();
      send_mixed_as_device(channel.view, p, per_producer, stop);
    });
  }
  go = true;
  std::vector<int> next(producers, 0);
  dcuda::runtime::channel_consumer reader(channel.view, dcuda_test::test_ranks, 0xfffffff0u);
  // A failed check stops the producers before it is reported (a joinable thread must not be
  // destroyed).
  try {
    for (int received = 0; received < producers * per_producer;) {
      const auto message = reader.try_take();
      if (!message) {
        reader.publish_position();
        std::this_thread::yield();
        continue;
      }
      ++received;
      const taken_operation taken = read_message(*message);
      const int p = taken.op.source_rank;
      DCUDA_CHECK(p >= 0 && p < producers);
      DCUDA_CHECK_EQ(message->rank, p);
      DCUDA_CHECK_EQ(taken.op.offset, next[p]);
      std::uint64_t payload = 0;
      DCUDA_CHECK(taken.payload.size() >= sizeof payload);
      std::memcpy(&payload, taken.payload.data(), sizeof payload);
      DCUDA_CHECK_EQ(payload,
                     static_cast<std::uint64_t>(next[p]) << 8 | static_cast<std::uint64_t>(p));
      ++next[p];
    }
  } catch (...) {
    stop = true;
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
  for (int p = 0; p < producers; ++p) DCUDA_CHECK_EQ(next[p], per_producer);
}
