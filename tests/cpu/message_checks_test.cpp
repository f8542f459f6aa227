// The validators of everything that crosses a trust boundary (transport/message_checks.h): for
// each message kind a well-formed message is accepted, and every malformed field is rejected by
// a description that names the source, the message and the field.
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dcuda/detail/protocol/calls.h"
#include "dcuda/detail/protocol/compact_operation.h"
#include "dcuda/detail/protocol/world_collective.h"
#include "host_channel.h"
#include "runtime/channel_consumer.h"
#include "runtime/error.h"
#include "test_main.h"
#include "transport/message_checks.h"

namespace {

using namespace dcuda;
using protocol::operation_kind;
using protocol::remote_operation;

template <typename T>
std::vector<std::byte> bytes_of(const T& value, std::size_t extra = 0) {
  std::vector<std::byte> bytes(sizeof value + extra);
  std::memcpy(bytes.data(), &value, sizeof value);
  return bytes;
}

void check_mentions(const std::string& problem, const std::vector<std::string>& words,
                    const std::string& name) {
  if (problem.empty()) throw dcuda_test::failure(name + ": accepted");
  for (const std::string& word : words) {
    if (problem.find(word) == std::string::npos) {
      throw dcuda_test::failure(name + ": \"" + problem + "\" does not mention \"" + word + "\"");
    }
  }
}

// ---- operation headers ----

// Process 2 (ranks 4..5) sends to this process (ranks 0..3).
checks::header_limits receiver() {
  checks::header_limits limits;
  limits.source_process = 2;
  limits.source_rank_start = 4;
  limits.source_rank_count = 2;
  limits.target_rank_start = 0;
  limits.target_rank_count = 4;
  limits.header_payload_bytes = 256;
  limits.max_payload_bytes = 1 << 20;
  return limits;
}

remote_operation operation(operation_kind kind, std::int64_t size) {
  return remote_operation{static_cast<std::int32_t>(kind), 5, 3, 1, 64, size, 7, 42};
}

// The message the engine sends for `op`: its header, and its payload when that fits.
std::vector<std::byte> header_message(const remote_operation& op) {
  const bool inside = protocol::carries_payload(op) && op.size <= 256;
  return bytes_of(op, inside ? static_cast<std::size_t>(op.size) : 0);
}

struct header_case {
  const char* name;
  std::function<void(remote_operation&)> change;
  std::vector<std::string> mentions;
};

DCUDA_TEST(operation_headers_well_formed_are_accepted) {
  for (const auto kind : {operation_kind::put, operation_kind::put_notify}) {
    for (const std::int64_t size : {0, 1, 256, 257, 1 << 20}) {
      const std::string problem =
          checks::check_operation_header(header_message(operation(kind, size)), receiver());
      DCUDA_CHECK_EQ(problem, std::string());
    }
  }
  DCUDA_CHECK_EQ(checks::check_operation_header(
                     header_message(operation(operation_kind::notify, 0)), receiver()),
                 std::string());
  // A rank's put into a host window of this process: the host windows' first and last slots.
  for (const int slot : {protocol::host_window_first_slot, 255}) {
    remote_operation op = operation(operation_kind::put_notify, 300);
    op.window = slot;
    DCUDA_CHECK_EQ(checks::check_operation_header(header_message(op), receiver()), std::string());
    DCUDA_CHECK(checks::for_host_window(op));
  }
  DCUDA_CHECK(!checks::for_host_window(operation(operation_kind::put_notify, 300)));
  // Every tag and target at the edges.
  for (const int tag : {0, 255}) {
    for (const int target : {0, 3}) {
      remote_operation op = operation(operation_kind::notify, 0);
      op.tag = tag;
      op.target_rank = target;
      DCUDA_CHECK_EQ(checks::check_operation_header(header_message(op), receiver()), std::string());
    }
  }
}

// Counted in docs/reliability.md: 22 malformed headers by field, 5 by byte count.
DCUDA_TEST(operation_headers_with_a_bad_field_are_rejected_naming_sender_and_field) {
  const std::vector<header_case> cases = {
      {"kind 0", [](remote_operation& op) { op.kind = 0; }, {"process 2", "kind 0"}},
      {"kind 7", [](remote_operation& op) { op.kind = 7; }, {"process 2", "kind 7"}},
      {"typed piece shorter than its head",
       [](remote_operation& op) {
         op.kind = static_cast<std::int32_t>(operation_kind::typed_put);
         op.size = 16;
       },
       {"process 2", "typed_put", "size 16", "32-byte head"}},
      {"typed piece far from its window",
       [](remote_operation& op) {
         op.kind = static_cast<std::int32_t>(operation_kind::typed_put_notify);
         op.offset = (std::int64_t{1} << 62) + 1;
       },
       {"typed_put_notify", "offset 4611686018427387905", "2^62"}},
      {"typed piece for window 32",
       [](remote_operation& op) {
         op.kind = static_cast<std::int32_t>(operation_kind::typed_put);
         op.window = 32;
       },
       {"window slot 32"}},
      {"target far",
       [](remote_operation& op) { op.target_rank = 123456789; },
       {"process 2", "target rank 123456789", "ranks 0..3"}},
      {"target -1", [](remote_operation& op) { op.target_rank = -1; }, {"target rank -1"}},
      {"target of another process",
       [](remote_operation& op) { op.target_rank = 4; },
       {"target rank 4"}},
      {"source of another process",
       [](remote_operation& op) { op.source_rank = 0; },
       {"process 2", "source rank 0", "ranks 4..5"}},
      {"tag 256", [](remote_operation& op) { op.tag = 256; }, {"process 2", "tag 256", "0..255"}},
      {"tag 100000", [](remote_operation& op) { op.tag = 100000; }, {"tag 100000"}},
      {"tag -1", [](remote_operation& op) { op.tag = -1; }, {"tag -1"}},
      {"window -1", [](remote_operation& op) { op.window = -1; }, {"window slot -1"}},
      {"window 32", [](remote_operation& op) { op.window = 32; }, {"window slot 32"}},
      {"window 127, below the host windows' slots",
       [](remote_operation& op) { op.window = 127; },
       {"window slot 127", "128..255"}},
      {"window 256, beyond the host windows' slots",
       [](remote_operation& op) { op.window = 256; },
       {"window slot 256"}},
      {"offset negative", [](remote_operation& op) { op.offset = -8; }, {"offset -8"}},
      {"size negative", [](remote_operation& op) { op.size = -1; }, {"size -1", "negative"}},
      {"offset + size overflows",
       [](remote_operation& op) {
         op.offset = INT64_MAX - 2;
         op.size = 300;
       },
       {"overflows"}},
      {"size beyond staging",
       [](remote_operation& op) { op.size = (1 << 20) + 1; },
       {"size 1048577", "stage"}},
      {"size 2^32 + 1 (not small when truncated)",
       [](remote_operation& op) { op.size = (std::int64_t{1} << 32) + 1; },
       {"size 4294967297"}},
      {"notify with a size",
       [](remote_operation& op) {
         op.kind = static_cast<std::int32_t>(operation_kind::notify);
         op.size = 16;
       },
       {"notify carries no payload"}},
  };
  int rejected = 0;
  for (const header_case& c : cases) {
    remote_operation op = operation(operation_kind::put_notify, 300);
    c.change(op);
    // The message has the length the (bad) header implies, so only the field is wrong.
    const std::vector<std::byte> message =
        bytes_of(op, protocol::carries_payload(op) && op.size >= 0 && op.size <= 256
                         ? static_cast<std::size_t>(op.size)
                         : 0);
    check_mentions(checks::check_operation_header(message, receiver()), c.mentions, c.name);
    ++rejected;
  }
  DCUDA_CHECK_EQ(rejected, 22);
}

// A rank's put into a host window of this process, checked where it lands against this process's
// own host windows.
DCUDA_TEST(puts_into_host_windows_land_only_inside_a_live_window_of_this_process) {
  std::vector<protocol::host_window_entry> own(protocol::host_window_slots,
                                               protocol::host_window_entry{});
  own[2] = {0x7000, 4096, 3, 0};  // slot 130: a live window of 4 KiB
  own[5] = {0, 0, 4, 0};          // slot 133: live, this process exposed no bytes
  const auto put_into = [](int slot, std::int64_t offset, std::int64_t size) {
    remote_operation op = operation(operation_kind::put_notify, size);
    op.window = slot;
    op.offset = offset;
    return op;
  };
  DCUDA_CHECK_EQ(checks::check_host_window_put(put_into(130, 0, 4096), 2, own), std::string());
  DCUDA_CHECK_EQ(checks::check_host_window_put(put_into(130, 4000, 96), 2, own), std::string());
  DCUDA_CHECK_EQ(checks::check_host_window_put(put_into(130, 4096, 0), 2, own), std::string());
  DCUDA_CHECK_EQ(checks::check_host_window_put(put_into(133, 0, 0), 2, own), std::string());
  check_mentions(checks::check_host_window_put(put_into(130, 4000, 97), 2, own),
                 {"process 2", "[4000, 4097)", "4096 bytes"}, "past the end");
  check_mentions(checks::check_host_window_put(put_into(133, 0, 1), 2, own), {"[0, 1)", "0 bytes"},
                 "into a window of no bytes");
  check_mentions(checks::check_host_window_put(put_into(131, 0, 8), 2, own),
                 {"process 2", "no host window in slot 131"}, "a free slot");
  check_mentions(checks::check_host_window_put(put_into(130, 0, 8), 2, {}),
                 {"no host window in slot 130"}, "a process without host windows");
  check_mentions(checks::check_host_window_put(put_into(3, 0, 8), 2, own),
                 {"not a put into a host window"}, "a device window's slot");
  remote_operation notify = operation(operation_kind::notify, 0);
  notify.window = 130;
  check_mentions(checks::check_host_window_put(notify, 2, own), {"not a put into a host window"},
                 "a notify");
}

DCUDA_TEST(operation_headers_whose_byte_count_differs_from_the_header_are_rejected) {
  const remote_operation small = operation(operation_kind::put, 100);
  const std::vector<std::byte> whole = header_message(small);
  // Short: 10 bytes (less than a header); a header without its inline payload; one byte short.
  check_mentions(checks::check_operation_header(std::span(whole).first(10), receiver()),
                 {"process 2", "10 bytes", "at least 40"}, "short");
  check_mentions(checks::check_operation_header(std::span(whole).first(40), receiver()),
                 {"process 2", "40 bytes", "says 140"}, "payload missing");
  check_mentions(checks::check_operation_header(std::span(whole).first(139), receiver()),
                 {"139 bytes", "says 140"}, "one byte short");
  // Long: a payload after a header that travels without one.
  const std::vector<std::byte> notify_with_bytes =
      bytes_of(operation(operation_kind::notify, 0), 8);
  check_mentions(checks::check_operation_header(notify_with_bytes, receiver()),
                 {"48 bytes", "says 40"}, "notify with bytes");
  const std::vector<std::byte> chunked_with_bytes =
      bytes_of(operation(operation_kind::put, 4096), 8);
  check_mentions(checks::check_operation_header(chunked_with_bytes, receiver()),
                 {"48 bytes", "says 40"}, "chunked payload inside");
  DCUDA_CHECK_EQ(
      checks::check_operation_header({}, receiver()).find("0 bytes") != std::string::npos, true);
}

// ---- announcements ----

checks::announcement_limits announcement_from_1() {
  checks::announcement_limits limits;
  limits.source_process = 1;
  limits.expected_sequence = 3;
  limits.latest_sequence = 4;
  limits.headers_sent_before = 10;
  return limits;
}

DCUDA_TEST(announcements_well_formed_are_accepted) {
  const checks::announcement_head head{3, 12, 3, 0};
  DCUDA_CHECK_EQ(checks::check_announcement(bytes_of(head), announcement_from_1()), std::string());
  DCUDA_CHECK_EQ(checks::check_announcement(bytes_of(head, 500), announcement_from_1()),
                 std::string());
  // A source one collective ahead of this process.
  checks::announcement_limits ahead = announcement_from_1();
  ahead.latest_sequence = 3;
  DCUDA_CHECK_EQ(checks::check_announcement(bytes_of(head), ahead), std::string());
}

// Counted in docs/reliability.md: 7 malformed announcements.
DCUDA_TEST(announcements_malformed_are_rejected_naming_sender_and_field) {
  const checks::announcement_head good{3, 12, 3, 0};
  const std::vector<std::byte> whole = bytes_of(good);
  int rejected = 0;
  for (const std::size_t length : {std::size_t{0}, std::size_t{2}, std::size_t{23}}) {
    check_mentions(
        checks::check_announcement(std::span(whole).first(length), announcement_from_1()),
        {"process 1", std::to_string(length) + " bytes", "at least 24"}, "short");
    ++rejected;
  }
  const auto with = [](std::int64_t sequence, std::int64_t headers) {
    return bytes_of(checks::announcement_head{sequence, headers, 3, 0});
  };
  check_mentions(checks::check_announcement(with(2, 12), announcement_from_1()),
                 {"process 1", "sequence 2", "duplicate"}, "duplicate");
  ++rejected;
  check_mentions(checks::check_announcement(with(9, 12), announcement_from_1()),
                 {"process 1", "sequence 9", "not the next one, 3"}, "skipped ahead");
  ++rejected;
  checks::announcement_limits behind = announcement_from_1();
  behind.latest_sequence = 2;
  check_mentions(checks::check_announcement(with(3, 12), behind),
                 {"process 1", "more than one collective ahead"}, "too far ahead");
  ++rejected;
  check_mentions(checks::check_announcement(with(3, 9), announcement_from_1()),
                 {"process 1", "headers_sent 9", "previous announcement's 10"}, "count backwards");
  ++rejected;
  DCUDA_CHECK_EQ(rejected, 7);
}

// ---- window contributions ----

std::vector<std::byte> contribution(int ranks, const std::vector<checks::window_card>& cards) {
  checks::window_contribution_head head{};
  head.windows_in_use = 0b101;
  head.ranks = ranks;
  head.generation[0] = 7;
  std::vector<std::byte> bytes = bytes_of(head);
  for (const auto& card : cards) {
    const std::vector<std::byte> more = bytes_of(card);
    bytes.insert(bytes.end(), more.begin(), more.end());
  }
  return bytes;
}

checks::window_card card(std::uint64_t base, std::uint64_t size) {
  checks::window_card c{};
  c.base = base;
  c.size = size;
  return c;
}

checks::window_card exported(std::uint64_t offset, std::uint64_t size,
                             std::uint64_t allocation_bytes) {
  checks::window_card c = card(0x7f0000000000 + offset, size);
  c.offset = offset;
  c.allocation_bytes = allocation_bytes;
  c.exported = 1;
  return c;
}

DCUDA_TEST(window_contributions_well_formed_are_accepted) {
  DCUDA_CHECK_EQ(
      checks::check_window_contribution(
          contribution(3, {card(0x1000, 64), card(0, 0), exported(256, 768, 1024)}), 1, 4, 3),
      std::string());
  DCUDA_CHECK_EQ(checks::check_window_contribution(contribution(0, {}), 1, 4, 0), std::string());
}

// Counted in docs/reliability.md: 11 malformed contributions.
DCUDA_TEST(window_contributions_malformed_are_rejected_naming_process_rank_and_field) {
  const auto check = [](const std::vector<std::byte>& bytes, int ranks,
                        const std::vector<std::string>& mentions, const char* name) {
    check_mentions(checks::check_window_contribution(bytes, 1, 4, ranks), mentions, name);
  };
  const std::vector<std::byte> good = contribution(2, {card(0x1000, 64), card(0x2000, 64)});
  int rejected = 0;
  check(std::vector<std::byte>(good.begin(), good.begin() + 2), 2, {"process 1", "2 bytes"},
        "shorter than the head");
  ++rejected;
  check(std::vector<std::byte>(good.begin(), good.end() - 1), 2,
        {"process 1", std::to_string(good.size() - 1) + " bytes", std::to_string(good.size())},
        "one card byte short");
  ++rejected;
  std::vector<std::byte> longer = good;
  longer.resize(good.size() + 8);
  check(longer, 2, {std::to_string(good.size() + 8) + " bytes"}, "longer");
  ++rejected;
  check(good, 3, {"process 1", "for 2 ranks", "owns 3"}, "rank count");
  ++rejected;
  check(contribution(-1, {}), -1 + 1, {"for -1 ranks"}, "negative rank count");
  ++rejected;
  std::vector<std::byte> bad_generation = good;
  const std::uint32_t huge = 0x800000;
  std::memcpy(bad_generation.data() + offsetof(checks::window_contribution_head, generation), &huge,
              sizeof huge);
  check(bad_generation, 2, {"generation 8388608", "slot 0"}, "generation");
  ++rejected;
  check(contribution(2, {card(0x1000, 64), card(0, 4096)}), 2,
        {"process 1", "rank 5", "NULL base with a size"}, "NULL base");
  ++rejected;
  check(contribution(2, {card(0x1000, static_cast<std::uint64_t>(-64)), card(0x2000, 1)}), 2,
        {"rank 4", "-64 bytes", "negative"}, "negative size");
  ++rejected;
  check(contribution(1, {card(0xffffffffffff0000, 0x20000)}), 1, {"rank 4", "address space"},
        "wraps");
  ++rejected;
  check(contribution(1, {exported(256, 1024, 1024)}), 1,
        {"rank 4", "offset 256", "past its allocation of 1024"}, "past the allocation");
  ++rejected;
  checks::window_card odd = exported(0, 64, 64);
  odd.exported = 2;
  check(contribution(1, {odd}), 1, {"rank 4", "exported is 2"}, "exported flag");
  ++rejected;
  DCUDA_CHECK_EQ(rejected, 11);
}

// ---- command-channel entries ----

constexpr checks::channel_limits gpu_ranks{8, 4, 64, 32};  // ranks 8..11 of 32, a ring of 64

std::vector<std::byte> entry(protocol::message_type type, int rank, std::uint16_t entries) {
  protocol::channel_entry e{};
  e.sequence = 1;
  e.type = static_cast<std::uint16_t>(type);
  e.entries = entries;
  e.rank = rank;
  return bytes_of(e);
}

DCUDA_TEST(channel_entries_well_formed_are_accepted) {
  using protocol::message_type;
  for (const auto type :
       {message_type::log_line, message_type::timer_start, message_type::timer_stop,
        message_type::ping, message_type::remote_operation, message_type::world_collective}) {
    DCUDA_CHECK_EQ(checks::check_channel_entry(entry(type, 8, 1), gpu_ranks), std::string());
    DCUDA_CHECK_EQ(checks::check_channel_entry(entry(type, 11, 0), gpu_ranks), std::string());
  }
  DCUDA_CHECK_EQ(
      checks::check_channel_entry(entry(message_type::remote_operation, 9, 23), gpu_ranks),
      std::string());
}

// Counted in docs/reliability.md: 7 malformed entries.
DCUDA_TEST(channel_entries_malformed_are_rejected_naming_rank_and_field) {
  using protocol::message_type;
  int rejected = 0;
  const auto check = [&](const std::vector<std::byte>& bytes,
                         const std::vector<std::string>& mentions, const char* name) {
    check_mentions(checks::check_channel_entry(bytes, gpu_ranks), mentions, name);
    ++rejected;
  };
  check(entry(message_type::empty, 8, 1), {"rank 8", "type 0"}, "empty type");
  check(entry(static_cast<message_type>(99), 8, 1), {"type 99", "no message type"}, "type 99");
  check(entry(message_type::ping, 7, 1), {"rank 7", "ranks 8..11"}, "rank below");
  check(entry(message_type::ping, 12, 1), {"rank 12"}, "rank above");
  check(entry(message_type::log_line, 8, 65), {"65 entries", "ring of 64"}, "beyond the ring");
  check(entry(message_type::remote_operation, 8, 24), {"24 entries", "at most 23"},
        "beyond the type");
  check(std::vector<std::byte>(16), {"16 bytes"}, "short entry");
  DCUDA_CHECK_EQ(rejected, 7);
}

protocol::compact_entry compact(const remote_operation& op, std::uint32_t sequence = 5) {
  return protocol::encode_compact_operation(op, 0x0807060504030201ull, sequence);
}

remote_operation channel_op(operation_kind kind, int size) {
  return remote_operation{static_cast<std::int32_t>(kind), 9, 20, 2, 16, size, 3, 0};
}

DCUDA_TEST(compact_entries_well_formed_are_accepted) {
  for (const int size : {0, 1, 8}) {
    DCUDA_CHECK_EQ(checks::check_compact_entry(
                       bytes_of(compact(channel_op(operation_kind::put_notify, size))), gpu_ranks),
                   std::string());
  }
  remote_operation notify = channel_op(operation_kind::notify, 0);
  notify.window = -1;
  DCUDA_CHECK_EQ(checks::check_compact_entry(bytes_of(compact(notify)), gpu_ranks), std::string());
}

// Counted in docs/reliability.md: 8 malformed compact entries.
DCUDA_TEST(compact_entries_malformed_are_rejected_naming_rank_and_field) {
  int rejected = 0;
  const auto check = [&](const remote_operation& op, const std::vector<std::string>& mentions,
                         const char* name) {
    check_mentions(checks::check_compact_entry(bytes_of(compact(op)), gpu_ranks), mentions, name);
    ++rejected;
  };
  remote_operation op = channel_op(operation_kind::put, 255);  // what 8 bits can claim
  check(op, {"rank 9", "size 255", "8 bytes"}, "size 255");
  op = channel_op(operation_kind::put, 9);
  check(op, {"size 9"}, "size 9");
  op = channel_op(operation_kind::put, 4);
  op.kind = 0;
  check(op, {"rank 9", "kind 0"}, "kind 0");
  op.kind = 200;
  check(op, {"kind 200"}, "kind 200");
  op = channel_op(operation_kind::put, 4);
  op.source_rank = 40;
  check(op, {"rank 40", "ranks 8..11"}, "rank of another GPU");
  op = channel_op(operation_kind::notify, 0);
  op.target_rank = 32;
  check(op, {"rank 9", "target rank 32", "0..31"}, "target outside the world");
  op = channel_op(operation_kind::put, 4);
  op.window = -1;
  check(op, {"window slot -1"}, "put without a window");
  // Words that do not all carry the sequence of word 0.
  protocol::compact_entry torn = compact(channel_op(operation_kind::put, 4));
  torn.words[3] = protocol::stamped_word(1, 6);
  check_mentions(checks::check_compact_entry(bytes_of(torn), gpu_ranks), {"sequence 5"}, "torn");
  ++rejected;
  DCUDA_CHECK_EQ(rejected, 8);
}

// Counted in docs/reliability.md: 6 malformed operations handed over as regular messages.
DCUDA_TEST(channel_operations_malformed_are_rejected_naming_rank_and_field) {
  DCUDA_CHECK_EQ(
      checks::check_channel_operation(channel_op(operation_kind::put, 1024), 9, gpu_ranks),
      std::string());
  int rejected = 0;
  const auto check = [&](const remote_operation& op, const std::vector<std::string>& mentions,
                         const char* name) {
    check_mentions(checks::check_channel_operation(op, 9, gpu_ranks), mentions, name);
    ++rejected;
  };
  remote_operation op = channel_op(operation_kind::put, 64);
  op.source_rank = 10;
  check(op, {"rank 9", "source rank 10"}, "source is not the entry's rank");
  op = channel_op(operation_kind::notify, 0);
  op.tag = 256;
  check(op, {"tag 256"}, "tag");
  op = channel_op(operation_kind::put, 64);
  op.target_rank = -1;
  check(op, {"target rank -1"}, "target");
  op = channel_op(operation_kind::put, 64);
  op.size = std::int64_t{1} << 31;
  check(op, {"size 2147483648"}, "size beyond an int");
  op = channel_op(operation_kind::put, 64);
  op.offset = -1;
  check(op, {"offset -1"}, "offset");
  op = channel_op(operation_kind::put, -5);
  check(op, {"size -5"}, "negative size");
  DCUDA_CHECK_EQ(rejected, 6);
}

// Counted in docs/reliability.md: 4 malformed collective requests.
DCUDA_TEST(collective_requests_malformed_are_rejected_naming_rank_and_field) {
  protocol::world_collective_request request{};
  request.call = static_cast<std::uint32_t>(protocol::call::win_create);
  DCUDA_CHECK_EQ(checks::check_collective_request(bytes_of(request), 8), std::string());
  int rejected = 0;
  const std::vector<std::byte> whole = bytes_of(request);
  check_mentions(checks::check_collective_request(std::span(whole).first(20), 8),
                 {"rank 8", "20 bytes"}, "short");
  ++rejected;
  request.call = static_cast<std::uint32_t>(protocol::call::put);
  check_mentions(checks::check_collective_request(bytes_of(request), 8),
                 {"rank 8", "call " + std::to_string(request.call)}, "not a collective");
  ++rejected;
  request.call = 1000;
  check_mentions(checks::check_collective_request(bytes_of(request), 8), {"call 1000"}, "call");
  ++rejected;
  request.call = static_cast<std::uint32_t>(protocol::call::win_create);
  request.generation[31] = 0x1000000;
  check_mentions(checks::check_collective_request(bytes_of(request), 8),
                 {"generation 16777216", "slot 31"}, "generation");
  ++rejected;
  DCUDA_CHECK_EQ(rejected, 4);
}

// The consumer calls the checks before it uses anything of an entry: a compact entry claiming
// 255 bytes of its 8-byte payload, or a message of a rank of another GPU, is an error, not a read
// past the payload or an index past the per-rank arrays.
DCUDA_TEST(channel_consumer_refuses_malformed_entries_before_using_them) {
  {
    dcuda_test::host_channel channel(8);
    const std::uint32_t ticket = protocol::reserve_entries(channel.view, 1);
    const protocol::compact_entry bad = protocol::encode_compact_operation(
        channel_op(operation_kind::put, 255), 0, protocol::entry_sequence(ticket));
    std::memcpy(&protocol::entry_at(channel.view, ticket), &bad, sizeof bad);
    runtime::channel_consumer reader(channel.view, gpu_ranks);
    std::string refusal;
    try {
      reader.try_take();
    } catch (const runtime::error& e) {
      refusal = e.what();
      DCUDA_CHECK(e.code() == DCUDA_ERROR_INTERNAL);
    }
    check_mentions(refusal, {"rank 9", "size 255"}, "compact size 255");
  }
  {
    dcuda_test::host_channel channel(8);
    const std::uint32_t ticket = protocol::reserve_entries(channel.view, 1);
    protocol::channel_entry& e = protocol::entry_at(channel.view, ticket);
    e.type = static_cast<std::uint16_t>(protocol::message_type::ping);
    e.entries = 1;
    e.rank = 123456789;
    protocol::publish_entry(e, ticket);
    runtime::channel_consumer reader(channel.view, gpu_ranks);
    std::string refusal;
    try {
      reader.try_take();
    } catch (const runtime::error& error) {
      refusal = error.what();
    }
    check_mentions(refusal, {"rank 123456789", "ranks 8..11"}, "ping of another GPU");
  }
}

}  // namespace

// A typed put's operation as a rank hands it over: all its packed bytes (more than a device int
// may count them), its element 0 anywhere the window's range check allows; ranks never send a
// layout, and no typed operation comes as a compact entry.
DCUDA_TEST(typed_operations_from_ranks_are_checked_as_typed) {
  remote_operation typed = channel_op(operation_kind::typed_put_notify, 0);
  typed.size = std::int64_t{3} << 31;
  DCUDA_CHECK_EQ(checks::check_channel_operation(typed, 9, gpu_ranks), std::string());
  typed.offset = -64;
  DCUDA_CHECK_EQ(checks::check_channel_operation(typed, 9, gpu_ranks), std::string());
  remote_operation layout = channel_op(operation_kind::type_layout, 64);
  check_mentions(checks::check_channel_operation(layout, 9, gpu_ranks),
                 {"rank 9", "type_layout", "ranks send no type_layout"}, "layout from a rank");
  remote_operation compact_typed = channel_op(operation_kind::typed_put, 4);
  check_mentions(checks::check_compact_entry(bytes_of(compact(compact_typed)), gpu_ranks),
                 {"rank 9", "typed_put", "compact entry"}, "typed compact entry");
}
