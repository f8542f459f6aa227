#include "transport/message_checks.h"

#include <cstring>
#include <limits>
#include <sstream>

#include "dcuda/detail/protocol/calls.h"
#include "dcuda/detail/protocol/compact_operation.h"
#include "dcuda/detail/protocol/host_window_view.h"
#include "dcuda/detail/protocol/typed_piece.h"
#include "dcuda/detail/protocol/window_table.h"
#include "dcuda/detail/protocol/world_collective.h"

namespace dcuda::checks {
namespace {

using protocol::layout_part;
using protocol::operation_kind;
using protocol::remote_operation;

bool known_kind(std::int32_t kind) {
  return kind >= static_cast<std::int32_t>(operation_kind::put) &&
         kind <= static_cast<std::int32_t>(operation_kind::type_layout);
}

// Where a typed put's element 0 may lie from the window's base: far enough inside 64 bits that
// adding the bytes its elements touch (at most 2^61 either way, protocol::typed_range) cannot
// overflow.
constexpr std::int64_t typed_offset_reach = std::int64_t{1} << 62;

const char* kind_name(std::int32_t kind) {
  switch (kind) {
    case static_cast<std::int32_t>(operation_kind::put):
      return "put";
    case static_cast<std::int32_t>(operation_kind::put_notify):
      return "put_notify";
    case static_cast<std::int32_t>(operation_kind::notify):
      return "notify";
    case static_cast<std::int32_t>(operation_kind::typed_put):
      return "typed_put";
    case static_cast<std::int32_t>(operation_kind::typed_put_notify):
      return "typed_put_notify";
    case static_cast<std::int32_t>(operation_kind::type_layout):
      return "type_layout";
    default:
      return "unknown";
  }
}

bool host_window_slot(std::int32_t slot) {
  return slot >= protocol::host_window_first_slot &&
         slot < protocol::host_window_first_slot + protocol::host_window_slots;
}

bool within(std::int64_t value, std::int64_t start, std::int64_t count) {
  return value >= start && value - start < count;
}

// "ranks 4..7" / "no ranks"
std::string rank_span(int start, int count) {
  if (count <= 0) return "no ranks";
  return "ranks " + std::to_string(start) + ".." + std::to_string(start + count - 1);
}

// "a put_notify (operation 5 of rank 3 to rank 9, window 1, offset 0, size 64, tag 2)"
std::string describe(const remote_operation& op) {
  std::ostringstream text;
  if (known_kind(op.kind)) {
    text << "a " << kind_name(op.kind);
  } else {
    text << "an operation of kind " << op.kind;
  }
  text << " (operation " << op.operation_id << " of rank " << op.source_rank << " to rank "
       << op.target_rank << ", window " << op.window << ", offset " << op.offset << ", size "
       << op.size << ", tag " << op.tag << ")";
  return text.str();
}

// The checks both directions share: kind, tag, payload range. `what()` names the message; it is
// called only for an error, since these checks run on every operation the proxy sends or
// receives. A typed put that a rank hands its proxy (`from_rank`) is one operation of all its
// packed bytes; on the network it travels as pieces and layout parts, each a head and bytes.
template <typename Description>
std::string check_common(const remote_operation& op, bool from_rank, const Description& what) {
  if (!known_kind(op.kind)) {
    return what() + ": kind " + std::to_string(op.kind) + " is none of put (1), put_notify (2), " +
           "notify (3), typed_put (4), typed_put_notify (5), type_layout (6)";
  }
  if (protocol::notifies(op) && (op.tag < 0 || op.tag >= protocol::tag_count)) {
    return what() + ": tag " + std::to_string(op.tag) + " is outside 0.." +
           std::to_string(protocol::tag_count - 1);
  }
  if (op.size < 0) return what() + ": size " + std::to_string(op.size) + " is negative";
  if (op.kind == static_cast<std::int32_t>(operation_kind::notify) && op.size != 0) {
    return what() + ": a notify carries no payload, but size is " + std::to_string(op.size);
  }
  const bool typed = protocol::typed_piece(op) || layout_part(op);
  if (typed && !from_rank && op.size < protocol::typed_piece_header_bytes) {
    return what() + ": size " + std::to_string(op.size) + " is less than its " +
           std::to_string(protocol::typed_piece_header_bytes) + "-byte head";
  }
  if (layout_part(op)) {
    if (from_rank) return what() + ": ranks send no type_layout";
    return {};
  }
  if (protocol::typed_piece(op)) {
    if (op.window < 0 || op.window >= protocol::max_windows) {
      return what() + ": window slot " + std::to_string(op.window) + " is outside 0.." +
             std::to_string(protocol::max_windows - 1);
    }
    if (op.offset < -typed_offset_reach || op.offset > typed_offset_reach) {
      return what() + ": offset " + std::to_string(op.offset) +
             " is further than 2^62 from the window";
    }
    return {};
  }
  if (protocol::carries_payload(op)) {
    // A put or put_notify may also be for a host window of the target's process (a rank's put
    // into it: check_host_window_put, where it lands).
    if ((op.window < 0 || op.window >= protocol::max_windows) && !host_window_slot(op.window)) {
      return what() + ": window slot " + std::to_string(op.window) + " is outside 0.." +
             std::to_string(protocol::max_windows - 1) + " and " +
             std::to_string(protocol::host_window_first_slot) + ".." +
             std::to_string(protocol::host_window_first_slot + protocol::host_window_slots - 1);
    }
    if (op.offset < 0) return what() + ": offset " + std::to_string(op.offset) + " is negative";
    if (op.size > std::numeric_limits<std::int64_t>::max() - op.offset) {
      return what() + ": offset " + std::to_string(op.offset) + " + size " +
             std::to_string(op.size) + " overflows";
    }
  }
  return {};
}

template <typename T>
T read_as(bytes message) {
  T value{};
  std::memcpy(&value, message.data(), sizeof value);
  return value;
}

}  // namespace

// ---- operation headers ----

std::string check_operation_fields(const remote_operation& op, const header_limits& limits) {
  const auto what = [&] {
    return std::string("process " + std::to_string(limits.source_process) + " sent " +
                       describe(op));
  };
  if (std::string problem = check_common(op, false, what); !problem.empty()) return problem;
  if (!within(op.source_rank, limits.source_rank_start, limits.source_rank_count)) {
    return what() + ": source rank " + std::to_string(op.source_rank) +
           " is not one of the sender's " +
           rank_span(limits.source_rank_start, limits.source_rank_count);
  }
  if (!within(op.target_rank, limits.target_rank_start, limits.target_rank_count)) {
    return what() + ": target rank " + std::to_string(op.target_rank) +
           " is not one of this process's " +
           rank_span(limits.target_rank_start, limits.target_rank_count);
  }
  if (protocol::carries_payload(op) && op.size > limits.max_payload_bytes) {
    return what() + ": size " + std::to_string(op.size) + " is more than the " +
           std::to_string(limits.max_payload_bytes) + " bytes one operation may stage";
  }
  return {};
}

bool for_host_window(const remote_operation& op) {
  return (op.kind == static_cast<std::int32_t>(operation_kind::put) ||
          op.kind == static_cast<std::int32_t>(operation_kind::put_notify)) &&
         host_window_slot(op.window);
}

std::string check_host_window_put(const remote_operation& op, int source_process,
                                  std::span<const protocol::host_window_entry> own) {
  const auto what = [&] {
    return std::string("process " + std::to_string(source_process) + " sent " + describe(op));
  };
  if (!for_host_window(op)) return what() + ": not a put into a host window";
  const auto index = static_cast<std::size_t>(op.window - protocol::host_window_first_slot);
  if (index >= own.size() || own[index].generation == 0) {
    return what() + ": this process has no host window in slot " + std::to_string(op.window);
  }
  const protocol::host_window_entry& window = own[index];
  if (op.offset < 0 || op.size < 0 || static_cast<std::uint64_t>(op.offset) > window.size ||
      static_cast<std::uint64_t>(op.size) > window.size - static_cast<std::uint64_t>(op.offset)) {
    return what() + ": [" + std::to_string(op.offset) + ", " + std::to_string(op.offset + op.size) +
           ") is outside this process's host window of " + std::to_string(window.size) + " bytes";
  }
  return {};
}

std::string check_operation_header(bytes message, const header_limits& limits) {
  const auto from = [&] { return std::string("process " + std::to_string(limits.source_process)); };
  if (message.size() < sizeof(remote_operation)) {
    return from() + " sent an operation header of " + std::to_string(message.size()) +
           " bytes; a header has at least " + std::to_string(sizeof(remote_operation));
  }
  const auto op = read_as<remote_operation>(message);
  if (std::string problem = check_operation_fields(op, limits); !problem.empty()) return problem;
  const auto size = static_cast<std::size_t>(op.size);
  const bool payload_inside = protocol::carries_payload(op) && size <= limits.header_payload_bytes;
  const std::size_t expected = sizeof(remote_operation) + (payload_inside ? size : 0);
  if (message.size() != expected) {
    return from() + " sent " + describe(op) + " in a message of " + std::to_string(message.size()) +
           " bytes; its header says " + std::to_string(expected);
  }
  return {};
}

std::string check_payload_chunk(const remote_operation& op, int source_process, std::size_t chunk,
                                std::size_t chunks, std::int64_t received, std::int64_t due) {
  if (received == due) return {};
  const std::string what = "process " + std::to_string(source_process) + " sent chunk " +
                           std::to_string(chunk + 1) + " of " + std::to_string(chunks) + " of " +
                           describe(op);
  if (received < 0) {
    return what + " with more than the " + std::to_string(due) +
           " bytes its header leaves for it (the network chunk size must be the same in every "
           "process)";
  }
  return what + " with " + std::to_string(received) + " bytes; its header leaves " +
         std::to_string(due) + " for it";
}

// ---- announcements ----

std::string check_announcement(bytes message, const announcement_limits& limits) {
  const auto from = [&] { return std::string("process " + std::to_string(limits.source_process)); };
  if (message.size() < sizeof(announcement_head)) {
    return from() + " sent a collective announcement of " + std::to_string(message.size()) +
           " bytes; an announcement has at least " + std::to_string(sizeof(announcement_head));
  }
  const auto head = read_as<announcement_head>(message);
  const auto what = [&] {
    return std::string(from() + " announced collective " + std::to_string(head.sequence) +
                       " (call " + std::to_string(head.call) + ")");
  };
  if (head.sequence != limits.expected_sequence) {
    return what() + ": sequence " + std::to_string(head.sequence) + " is not the next one, " +
           std::to_string(limits.expected_sequence) +
           (head.sequence < limits.expected_sequence ? " (a duplicate)" : "");
  }
  if (head.sequence > limits.latest_sequence) {
    return what() + ": sequence " + std::to_string(head.sequence) +
           " is more than one collective ahead of this process's " +
           std::to_string(limits.latest_sequence - 1);
  }
  if (head.headers_sent < limits.headers_sent_before) {
    return what() + ": headers_sent " + std::to_string(head.headers_sent) +
           " is below the previous announcement's " + std::to_string(limits.headers_sent_before);
  }
  return {};
}

// ---- window contributions ----

std::string check_window_card(const window_card& card, int rank) {
  std::ostringstream what;
  what << "the window of rank " << rank << " (base 0x" << std::hex << card.base << std::dec << ", "
       << static_cast<std::int64_t>(card.size) << " bytes)";
  if (card.size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return what.str() + ": the size is negative";
  }
  if (card.base == 0 && card.size != 0) return what.str() + ": a NULL base with a size";
  if (card.size > std::numeric_limits<std::uint64_t>::max() - card.base) {
    return what.str() + ": it ends past the end of the address space";
  }
  if (card.exported != 0 && card.exported != 1) {
    return what.str() + ": exported is " + std::to_string(card.exported) + ", not 0 or 1";
  }
  if (card.exported == 1) {
    if (card.base == 0) return what.str() + ": an exported window with a NULL base";
    if (card.offset > card.base) {
      return what.str() + ": its offset " + std::to_string(card.offset) +
             " in the allocation is past its base";
    }
    if (card.offset > card.allocation_bytes || card.size > card.allocation_bytes - card.offset) {
      return what.str() + ": at offset " + std::to_string(card.offset) +
             " it ends past its allocation of " + std::to_string(card.allocation_bytes) + " bytes";
    }
  }
  return {};
}

std::string check_window_contribution(bytes contribution, int source_process, int source_rank_start,
                                      int expected_ranks) {
  const auto what = [&] {
    return std::string("process " + std::to_string(source_process) +
                       " contributed to dcuda_win_create");
  };
  if (contribution.size() < sizeof(window_contribution_head)) {
    return what() + " " + std::to_string(contribution.size()) + " bytes; the head alone has " +
           std::to_string(sizeof(window_contribution_head));
  }
  const auto head = read_as<window_contribution_head>(contribution);
  if (head.ranks != expected_ranks) {
    return what() + " for " + std::to_string(head.ranks) + " ranks; it owns " +
           std::to_string(expected_ranks);
  }
  const std::size_t expected = sizeof(window_contribution_head) +
                               sizeof(window_card) * static_cast<std::size_t>(expected_ranks);
  if (contribution.size() != expected) {
    return what() + " " + std::to_string(contribution.size()) + " bytes; " +
           std::to_string(expected_ranks) + " ranks make " + std::to_string(expected);
  }
  for (int slot = 0; slot < protocol::max_windows; ++slot) {
    if (head.generation[slot] > 0x7fffffu) {
      return what() + ": the generation " + std::to_string(head.generation[slot]) + " of slot " +
             std::to_string(slot) + " has more than 23 bits";
    }
  }
  for (int r = 0; r < expected_ranks; ++r) {
    window_card card{};
    std::memcpy(&card,
                contribution.data() + sizeof(window_contribution_head) +
                    sizeof(window_card) * static_cast<std::size_t>(r),
                sizeof card);
    if (std::string problem = check_window_card(card, source_rank_start + r); !problem.empty()) {
      return what() + ": " + problem;
    }
  }
  return {};
}

// ---- command-channel entries ----

namespace {

// The most entries a message of `type` ever takes; 0 for a type the device never sends.
std::uint32_t max_entries(protocol::message_type type) {
  using protocol::entries_for_bytes;
  using protocol::message_type;
  switch (type) {
    case message_type::log_line:
      return entries_for_bytes(protocol::max_log_line + 1);
    case message_type::timer_start:
    case message_type::timer_stop:
    case message_type::ping:
    case message_type::remote_operation_compact:
      return 1;
    case message_type::remote_operation:
      return 1 + entries_for_bytes(protocol::inline_put_limit);
    case message_type::world_collective:
      return entries_for_bytes(sizeof(protocol::world_collective_request));
    case message_type::empty:
      break;
  }
  return 0;
}

}  // namespace

std::string check_channel_entry(bytes entry, const channel_limits& limits) {
  if (entry.size() < sizeof(protocol::channel_entry)) {
    return "command channel: an entry of " + std::to_string(entry.size()) +
           " bytes; entries have " + std::to_string(sizeof(protocol::channel_entry));
  }
  const auto head = read_as<protocol::channel_entry>(entry);
  const auto what = [&] {
    return std::string("command channel: an entry of rank " + std::to_string(head.rank) +
                       " (type " + std::to_string(head.type) + ", " + std::to_string(head.entries) +
                       " entries)");
  };
  const std::uint32_t most = max_entries(static_cast<protocol::message_type>(head.type));
  if (most == 0) return what() + ": type " + std::to_string(head.type) + " is no message type";
  if (!within(head.rank, limits.rank_start, limits.rank_count)) {
    return what() + ": rank " + std::to_string(head.rank) + " is not one of this GPU's " +
           rank_span(limits.rank_start, limits.rank_count);
  }
  if (head.entries > limits.capacity) {
    return what() + ": " + std::to_string(head.entries) + " entries do not fit the ring of " +
           std::to_string(limits.capacity);
  }
  if (head.entries > most) {
    return what() + ": " + std::to_string(head.entries) + " entries; this type takes at most " +
           std::to_string(most);
  }
  return {};
}

std::string check_channel_operation(const remote_operation& op, int issuing_rank,
                                    const channel_limits& limits) {
  const auto what = [&] {
    return std::string("command channel: rank " + std::to_string(issuing_rank) + " handed over " +
                       describe(op));
  };
  if (std::string problem = check_common(op, true, what); !problem.empty()) return problem;
  if (op.source_rank != issuing_rank) {
    return what() + ": source rank " + std::to_string(op.source_rank) +
           " is not the rank of the entry, " + std::to_string(issuing_rank);
  }
  if (!within(op.target_rank, 0, limits.world_size)) {
    return what() + ": target rank " + std::to_string(op.target_rank) + " is outside 0.." +
           std::to_string(limits.world_size - 1);
  }
  // A typed put's size counts packed bytes (count x the type's size, which the proxy checks
  // against both types); any other size is a device int.
  if (!protocol::typed_piece(op) && op.size > std::numeric_limits<std::int32_t>::max()) {
    return what() + ": size " + std::to_string(op.size) + " is more than a device int";
  }
  return {};
}

std::string check_compact_entry(bytes entry, const channel_limits& limits) {
  if (entry.size() < sizeof(protocol::compact_entry)) {
    return "command channel: a compact entry of " + std::to_string(entry.size()) +
           " bytes; it has " + std::to_string(sizeof(protocol::compact_entry));
  }
  const auto words = read_as<protocol::compact_entry>(entry);
  const auto sequence = static_cast<std::uint32_t>(words.words[0]);
  remote_operation op{};
  std::uint64_t payload = 0;
  if (!protocol::decode_compact_operation(words, sequence, op, payload)) {
    return "command channel: a compact entry whose words do not all carry its sequence " +
           std::to_string(sequence);
  }
  if (std::string problem = check_compact_operation(op, limits); !problem.empty()) return problem;
  return check_channel_operation(op, op.source_rank, limits);
}

std::string check_compact_operation(const remote_operation& op, const channel_limits& limits) {
  // The rank is the source rank: the entry has no other (word 0 holds the sequence).
  if (!within(op.source_rank, limits.rank_start, limits.rank_count)) {
    return "command channel: a compact entry of rank " + std::to_string(op.source_rank) +
           ", which is not one of this GPU's " + rank_span(limits.rank_start, limits.rank_count);
  }
  if (protocol::typed_piece(op) || layout_part(op)) {
    return "command channel: rank " + std::to_string(op.source_rank) + " handed over " +
           describe(op) + " as a compact entry, which carries only a put, put_notify or notify";
  }
  if (op.size > protocol::compact_payload_bytes) {
    return "command channel: rank " + std::to_string(op.source_rank) + " handed over " +
           describe(op) + " as a compact entry: size " + std::to_string(op.size) +
           " is more than its " + std::to_string(protocol::compact_payload_bytes) + " bytes";
  }
  return {};
}

std::string check_collective_request(bytes payload, int rank) {
  const auto what = [&] {
    return std::string("command channel: rank " + std::to_string(rank) +
                       " handed over a "
                       "collective");
  };
  if (payload.size() < sizeof(protocol::world_collective_request)) {
    return what() + " of " + std::to_string(payload.size()) + " bytes; a request has " +
           std::to_string(sizeof(protocol::world_collective_request));
  }
  const auto request = read_as<protocol::world_collective_request>(payload);
  using protocol::call;
  const bool collective = request.call == static_cast<std::uint32_t>(call::gpu_init) ||
                          request.call == static_cast<std::uint32_t>(call::gpu_finish) ||
                          request.call == static_cast<std::uint32_t>(call::comm_barrier) ||
                          request.call == static_cast<std::uint32_t>(call::win_create) ||
                          request.call == static_cast<std::uint32_t>(call::win_free);
  if (!collective) {
    return what() + ": call " + std::to_string(request.call) + " is no collective over " +
           "DCUDA_COMM_WORLD";
  }
  for (int slot = 0; slot < protocol::max_windows; ++slot) {
    if (request.generation[slot] > 0x7fffffu) {
      return what() + ": the generation " + std::to_string(request.generation[slot]) + " of slot " +
             std::to_string(slot) + " has more than 23 bits";
    }
  }
  return {};
}

}  // namespace dcuda::checks
