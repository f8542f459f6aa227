// The device->host channel under contention: host threads stand in for ranks (producers, using
// the protocol functions the device uses) and the runtime's own consumer reads.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/command_channel.h"
#include "runtime/channel_consumer.h"
#include "host_channel.h"
#include "test_main.h"

namespace {

using namespace dcuda::protocol;

using dcuda_test::host_channel;

// "p<producer>:<serial>;" (snprintf: GCC 12's -Wrestrict misfires on string concatenation here)
std::string piece(int producer, int serial) {
  char text[32];
  std::snprintf(text, sizeof text, "p%d:%d;", producer, serial);
  return text;
}

// A producer as the device runs it: reserve, wait for room, fill, publish.
void send_as_device(const channel_view& channel, int producer, int serial, std::uint32_t n) {
  const std::uint32_t first = reserve_entries(channel, n);
  std::uint32_t consumed = 0;
  while (!producer_has_room(channel, first, n, consumed)) std::this_thread::yield();
  for (std::uint32_t i = 0; i < n; ++i) {
    channel_entry& entry = entry_at(channel, first + i);
    entry.type = static_cast<std::uint16_t>(message_type::log_line);
    entry.entries = static_cast<std::uint16_t>(i == 0 ? n : 0);
    entry.rank = producer;
    entry.aux = serial;
    // Payload: "p<producer>:<serial>" in every entry, so a torn message shows.
    const std::string text = piece(producer, serial);
    std::fill(std::begin(entry.payload), std::end(entry.payload), '\0');
    std::copy(text.begin(), text.end(), entry.payload);
    publish_entry(entry, first + i);
  }
}

void run_contention(std::uint32_t capacity, std::uint32_t start, int producers, int per_producer) {
  host_channel channel(capacity, start);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      while (!go) std::this_thread::yield();
      for (int s = 0; s < per_producer; ++s) send_as_device(channel.view, p, s, 1 + (s + p) % 3);
    });
  }
  std::vector<int> next(static_cast<std::size_t>(producers), 0);
  go = true;
  const int total = producers * per_producer;
  int received = 0;
  dcuda::runtime::channel_consumer reader(channel.view, dcuda_test::test_ranks, start);
  while (received < total) {
    auto message = reader.try_take();
    if (!message) {
      reader.publish_position();
      std::this_thread::yield();
      continue;
    }
    ++received;
    const int p = message->rank;
    const int s = message->aux;
    DCUDA_CHECK(p >= 0 && p < producers);
    DCUDA_CHECK_EQ(s, next[static_cast<std::size_t>(p)]);  // per-producer order kept
    ++next[static_cast<std::size_t>(p)];
    std::string expected;
    for (std::uint32_t i = 0; i < 1 + static_cast<std::uint32_t>((s + p) % 3); ++i) {
      expected += piece(p, s);
    }
    DCUDA_CHECK_EQ(message->text, expected);  // every entry of the message, none torn
  }
  for (auto& t : threads) t.join();
  DCUDA_CHECK(!reader.try_take().has_value());  // nothing extra
  for (int p = 0; p < producers; ++p)
    DCUDA_CHECK_EQ(next[static_cast<std::size_t>(p)], per_producer);
}

}  // namespace

DCUDA_TEST(channel_delivers_every_message_in_order_under_contention) {
  run_contention(/*capacity=*/16, /*start=*/0, /*producers=*/8, /*per_producer=*/4000);
}

DCUDA_TEST(channel_survives_ticket_wraparound) {
  run_contention(/*capacity=*/8, /*start=*/0xffffff00u, /*producers=*/4, /*per_producer=*/2000);
}

DCUDA_TEST(channel_full_ring_blocks_producer_until_consumer_publishes) {
  host_channel channel(4);
  for (int s = 0; s < 4; ++s) send_as_device(channel.view, 0, s, 1);
  std::atomic<bool> fifth_sent{false};
  std::thread producer([&] {
    send_as_device(channel.view, 0, 4, 1);
    fifth_sent = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  DCUDA_CHECK(!fifth_sent);  // the ring is full: the producer waits, nothing is overwritten
  dcuda::runtime::channel_consumer reader(channel.view, dcuda_test::test_ranks);
  auto first = reader.try_take();
  DCUDA_CHECK(first.has_value());
  DCUDA_CHECK_EQ(first->aux, 0);
  reader.publish_position();
  producer.join();
  DCUDA_CHECK(fifth_sent);
  for (int s = 1; s <= 4; ++s) {
    auto message = reader.try_take();
    DCUDA_CHECK(message.has_value());
    DCUDA_CHECK_EQ(message->aux, s);
  }
}

// Before a ring's first lap is complete its entries hold zeros; the sequence of ticket 2^32 - 1 is
// not 0, so a zeroed entry there is not taken for a complete one (it was, in the contention test
// that starts 16 tickets before the wrap, now and then).
DCUDA_TEST(channel_zeroed_entry_is_never_complete_across_the_wrap) {
  DCUDA_CHECK(entry_sequence(0xffffffffu) != 0u);
  DCUDA_CHECK(entry_sequence(0xffffffffu) != entry_sequence(0xffffffffu - 16u));
  DCUDA_CHECK_EQ(entry_sequence(5u), 6u);
  host_channel channel(16, 0xfffffff0u);
  for (std::uint32_t ticket = 0xfffffff0u; ticket != 0x10u; ++ticket) {
    DCUDA_CHECK(ready_entry(channel.view, ticket) == nullptr);
  }
  publish_entry(entry_at(channel.view, 0xffffffffu), 0xffffffffu);
  DCUDA_CHECK(ready_entry(channel.view, 0xffffffffu) != nullptr);
  DCUDA_CHECK(ready_entry(channel.view, 0xffffffffu + 16u) == nullptr);  // the slot's next lap
}

DCUDA_TEST(channel_incomplete_message_is_not_taken) {
  host_channel channel(8);
  const std::uint32_t first = reserve_entries(channel.view, 2);
  channel_entry& head = entry_at(channel.view, first);
  head.type = static_cast<std::uint16_t>(message_type::log_line);
  head.entries = 2;
  publish_entry(head, first);  // second entry not yet published
  dcuda::runtime::channel_consumer reader(channel.view, dcuda_test::test_ranks);
  DCUDA_CHECK(!reader.try_take().has_value());
  publish_entry(entry_at(channel.view, first + 1), first + 1);
  DCUDA_CHECK(reader.try_take().has_value());
}

// While the ring is full, only the producer holding the poller flag reads the consumer's position;
// the others go by the cached copy until that producer has refreshed it.
DCUDA_TEST(channel_full_ring_is_polled_by_one_producer_at_a_time) {
  host_channel channel(4);
  const std::uint32_t first = reserve_entries(channel.view, 4);
  const std::uint32_t waiting = reserve_entries(channel.view, 1);  // needs entry `first` freed
  std::uint32_t consumed = 0;
  DCUDA_CHECK(producer_has_room(channel.view, first, 4, consumed));
  DCUDA_CHECK(!producer_has_room(channel.view, waiting, 1, consumed));
  DCUDA_CHECK_EQ(channel.poller, 0u);  // released after the read

  publish_consumed(channel.view, 1);  // the consumer has taken one entry
  channel.poller = 1;                 // another producer is reading
  DCUDA_CHECK(!producer_has_room(channel.view, waiting, 1, consumed));
  DCUDA_CHECK_EQ(consumed, 0u);  // it went by the stale cached copy
  channel.poller = 0;
  DCUDA_CHECK(producer_has_room(channel.view, waiting, 1, consumed));
  DCUDA_CHECK_EQ(consumed, 1u);
  DCUDA_CHECK_EQ(channel.seen, 1u);  // refreshed for the others
  DCUDA_CHECK_EQ(channel.poller, 0u);
}
