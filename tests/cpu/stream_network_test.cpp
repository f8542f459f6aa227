// The messages of stream-ordered operations through the network
// (runtime/stream_network_messages.h): every header another process could send is checked before it
// is used, the acknowledgements that flushes wait for, and the barrier arrivals that streams may
// reach out of order.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/stream_network_messages.h"
#include "error_text.h"
#include "test_main.h"

namespace {

using dcuda::runtime::check_stream_message;
using dcuda::runtime::stream_barrier_tally;
using dcuda::runtime::stream_message;
using dcuda::runtime::stream_message_context;
using dcuda::runtime::stream_message_kind;
using dcuda::runtime::stream_message_text;
using dcuda::runtime::stream_put_ledger;
using dcuda_test::contains;

// Process 1 of a job, ranks 4..6, exposing 64 bytes in window 300; the sender is process 2.
stream_message_context receiver() {
  stream_message_context context;
  context.sender = 2;
  context.rank_start = 4;
  context.rank_count = 3;
  context.tag_count = 256;
  context.window_size = [](int handle) -> std::optional<std::uint64_t> {
    if (handle == 300) return 64;
    return std::nullopt;
  };
  return context;
}

stream_message put(int rank, int window, std::uint64_t offset, std::uint64_t size, int tag) {
  stream_message message;
  message.kind = static_cast<std::uint32_t>(stream_message_kind::put);
  message.rank = rank;
  message.window = window;
  message.offset = offset;
  message.size = size;
  message.tag = tag;
  return message;
}

std::string wrong(const stream_message& message, const stream_message_context& context) {
  return check_stream_message(message, context).value_or("");
}

}  // namespace

DCUDA_TEST(stream_messages_dcuda_sends_pass_their_checks) {
  const stream_message_context context = receiver();
  DCUDA_CHECK(!check_stream_message(put(4, 300, 0, 64, 7), context));
  DCUDA_CHECK(!check_stream_message(put(6, 300, 60, 4, -1), context));
  DCUDA_CHECK(!check_stream_message(put(5, 300, 64, 0, 0), context));
  stream_message notify = put(6, 300, 0, 0, 255);
  notify.kind = static_cast<std::uint32_t>(stream_message_kind::notify);
  DCUDA_CHECK(!check_stream_message(notify, context));
  stream_message arrival;
  arrival.kind = static_cast<std::uint32_t>(stream_message_kind::barrier_arrival);
  arrival.sequence = 1;
  DCUDA_CHECK(!check_stream_message(arrival, context));
  stream_message closing;
  closing.kind = static_cast<std::uint32_t>(stream_message_kind::closing);
  DCUDA_CHECK(!check_stream_message(closing, context));
}

DCUDA_TEST(stream_messages_no_dcuda_sender_makes_are_refused_by_name) {
  stream_message_context context = receiver();
  DCUDA_CHECK(contains(wrong(put(7, 300, 0, 4, 1), context),
                       "a stream-ordered put from process 2 is not one dcuda sends: target rank 7 "
                       "is not one of this process's ranks (4..6)"));
  DCUDA_CHECK(contains(wrong(put(3, 300, 0, 4, 1), context), "target rank 3 is not one"));
  DCUDA_CHECK(contains(wrong(put(4, 300, 60, 5, 1), context),
                       "bytes [60, 60 + 5) are outside window 300, of which this process exposes "
                       "64 bytes"));
  // Offsets near the top of 64 bits do not wrap around into the window.
  DCUDA_CHECK(contains(wrong(put(4, 300, ~std::uint64_t{0}, 2, 1), context), "are outside"));
  DCUDA_CHECK(
      contains(wrong(put(4, 301, 0, 4, 1), context), "window 301 is not a live host window here"));
  DCUDA_CHECK(contains(wrong(put(4, 300, 0, 4, 256), context), "tag 256 is outside 0..255"));
  DCUDA_CHECK(contains(wrong(put(4, 300, 0, 4, -2), context), "tag -2 is outside"));
  stream_message notify = put(4, 300, 0, 0, -1);
  notify.kind = static_cast<std::uint32_t>(stream_message_kind::notify);
  DCUDA_CHECK(contains(wrong(notify, context),
                       "a stream-ordered notify from process 2 is not one dcuda sends: tag -1"));
  stream_message unknown = put(4, 300, 0, 0, 1);
  unknown.kind = 99;
  DCUDA_CHECK(contains(wrong(unknown, context), "unknown kind 99"));

  stream_message acknowledgement;
  acknowledgement.kind = static_cast<std::uint32_t>(stream_message_kind::acknowledgement);
  DCUDA_CHECK(contains(wrong(acknowledgement, context),
                       "an acknowledgement, but every put this process sent there is "
                       "acknowledged"));
  context.unacknowledged_puts = 1;
  DCUDA_CHECK(!check_stream_message(acknowledgement, context));

  stream_message arrival;
  arrival.kind = static_cast<std::uint32_t>(stream_message_kind::barrier_arrival);
  arrival.sequence = 0;
  DCUDA_CHECK(contains(wrong(arrival, context), "barrier number 0 (0 met here)"));
  context.barriers_met = 5;
  arrival.sequence = 5 + (std::uint64_t{1} << 20) + 1;
  DCUDA_CHECK(contains(wrong(arrival, context), "met here"));
  arrival.sequence = 5 + (std::uint64_t{1} << 20);
  DCUDA_CHECK(!check_stream_message(arrival, context));
}

// The network thread's trace names each header by its kind and the fields the kind uses.
DCUDA_TEST(stream_messages_read_as_text_name_their_kind_and_fields) {
  DCUDA_CHECK_EQ(stream_message_text(put(5, 300, 8, 16, 2)),
                 std::string("put of 16 bytes to rank 5 (window 300, offset 8, tag 2)"));
  stream_message notification;
  notification.kind = static_cast<std::uint32_t>(stream_message_kind::notify);
  notification.rank = 4;
  notification.tag = 9;
  DCUDA_CHECK_EQ(stream_message_text(notification), std::string("notify of tag 9 to rank 4"));
  stream_message arrival;
  arrival.kind = static_cast<std::uint32_t>(stream_message_kind::barrier_arrival);
  arrival.sequence = 3;
  DCUDA_CHECK_EQ(stream_message_text(arrival), std::string("barrier arrival 3"));
  stream_message unknown;
  unknown.kind = 77;
  DCUDA_CHECK_EQ(stream_message_text(unknown), std::string("kind 77"));
}

DCUDA_TEST(a_flush_waits_for_the_acknowledgements_of_what_was_sent_before_it) {
  stream_put_ledger ledger(3);
  ledger.sent(1);
  ledger.sent(1);
  ledger.sent(2);
  const std::vector<std::uint64_t> flush = ledger.sent_so_far();
  ledger.sent(2);  // after the flush was reached: not its concern
  DCUDA_CHECK_EQ(ledger.unacknowledged(1), std::uint64_t{2});
  DCUDA_CHECK(!ledger.covers(flush));
  ledger.acknowledged(1);
  ledger.acknowledged(2);
  DCUDA_CHECK(!ledger.covers(flush));  // process 1 still owes one
  ledger.acknowledged(1);
  DCUDA_CHECK(ledger.covers(flush));
  DCUDA_CHECK(!ledger.all_acknowledged());
  ledger.acknowledged(2);
  DCUDA_CHECK(ledger.all_acknowledged());
  DCUDA_CHECK_EQ(ledger.unacknowledged(0), std::uint64_t{0});
}

DCUDA_TEST(stream_barriers_complete_when_every_other_process_arrived_in_any_order) {
  stream_barrier_tally tally(3, 0);  // this is process 0
  DCUDA_CHECK(!tally.take_complete(1));
  DCUDA_CHECK((tally.missing(1) == std::vector<int>{1, 2}));
  // Process 2's streams reached its second barrier before its first.
  DCUDA_CHECK(tally.arrive(2, 2));
  DCUDA_CHECK(tally.arrive(1, 1));
  DCUDA_CHECK(!tally.arrive(1, 1));  // twice: refused
  DCUDA_CHECK((tally.missing(1) == std::vector<int>{2}));
  DCUDA_CHECK(!tally.take_complete(1));
  DCUDA_CHECK(tally.arrive(1, 2));
  DCUDA_CHECK(tally.take_complete(2));  // this process's stream may reach barrier 2 first
  DCUDA_CHECK_EQ(tally.met(), std::uint64_t{1});
  DCUDA_CHECK(tally.arrive(2, 1));
  DCUDA_CHECK(tally.take_complete(1));
  DCUDA_CHECK_EQ(tally.met(), std::uint64_t{2});
  DCUDA_CHECK((tally.missing(3) == std::vector<int>{1, 2}));
}
