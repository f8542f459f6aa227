// libFuzzer target: the network engine's validation of what another process sends
// (transport/message_checks.h): operation headers and collective announcements, on the raw bytes
// as MPI delivered them, against what the receiver knows.
//
// Input: a mode byte (even: a header, odd: an announcement), the receiver's limits (bounded to
// what a real job has: up to 16 processes of up to 1024 ranks each), then the message itself.
// Properties: the checks never fail on any bytes, and a message they accept is one the engine can
// use without any further check: checked again here, field by field; a put into a host window
// is also checked against a host window of the receiver (check_host_window_put), and one it
// accepts lies inside that window's bytes.
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "dcuda/detail/protocol/host_window_view.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/remote_operation.h"
#include "dcuda/detail/protocol/typed_piece.h"
#include "fuzz_input.h"
#include "transport/message_checks.h"

namespace {

using dcuda::protocol::remote_operation;
using dcuda_fuzz::violated;

bool within(std::int64_t value, std::int64_t start, std::int64_t count) {
  return value >= start && value < start + count;
}

void header(dcuda_fuzz::input& in) {
  dcuda::checks::header_limits limits{};
  limits.source_process = in.take<std::uint8_t>() % 16;
  limits.source_rank_start = in.take<std::uint16_t>() % 16384;
  limits.source_rank_count = in.take<std::uint16_t>() % 1025;
  limits.target_rank_start = in.take<std::uint16_t>() % 16384;
  limits.target_rank_count = in.take<std::uint16_t>() % 1025;
  limits.header_payload_bytes = 256;  // transport::mpi_engine::header_payload_bytes
  limits.max_payload_bytes = std::int64_t{1} + in.take<std::uint32_t>() % (std::int64_t{1} << 30);
  const auto message = in.bytes(sizeof(remote_operation) + 300);
  if (!dcuda::checks::check_operation_header(message, limits).empty()) return;

  remote_operation op{};
  std::memcpy(&op, message.data(), sizeof op);
  using dcuda::protocol::operation_kind;
  if (op.kind < static_cast<std::int32_t>(operation_kind::put) ||
      op.kind > static_cast<std::int32_t>(operation_kind::type_layout)) {
    violated("an accepted header of an unknown kind");
  }
  const bool layout_part = op.kind == static_cast<std::int32_t>(operation_kind::type_layout);
  const bool typed = dcuda::protocol::typed_piece(op);
  if ((typed || layout_part) &&
      (op.size < dcuda::protocol::typed_piece_header_bytes || op.size > limits.max_payload_bytes)) {
    violated("an accepted typed piece or layout part without its head or beyond staging");
  }
  if (typed && (op.window < 0 || op.window >= dcuda::protocol::max_windows ||
                op.offset < -(std::int64_t{1} << 62) || op.offset > (std::int64_t{1} << 62))) {
    violated("an accepted typed piece for no window or too far from it");
  }
  if (!within(op.source_rank, limits.source_rank_start, limits.source_rank_count) ||
      !within(op.target_rank, limits.target_rank_start, limits.target_rank_count)) {
    violated("an accepted header whose source or target is not the sender's or the receiver's");
  }
  if (dcuda::protocol::notifies(op) && (op.tag < 0 || op.tag >= dcuda::protocol::tag_count)) {
    violated("an accepted notifying header with a tag outside 0..255");
  }
  if (op.size < 0) violated("an accepted header with a negative size");
  // A put or put_notify may name a host window of the receiving process (slots
  // host_window_first_slot..255), which check_host_window_put then checks where it lands.
  const bool host_window = dcuda::checks::for_host_window(op);
  if (host_window &&
      (op.window < dcuda::protocol::host_window_first_slot ||
       op.window >= dcuda::protocol::host_window_first_slot + dcuda::protocol::host_window_slots)) {
    violated("a header taken for a host window's outside the host windows' slots");
  }
  if (dcuda::protocol::carries_payload(op) && !typed && !layout_part) {
    if ((!host_window && (op.window < 0 || op.window >= dcuda::protocol::max_windows)) ||
        op.offset < 0 || op.size > std::numeric_limits<std::int64_t>::max() - op.offset ||
        op.size > limits.max_payload_bytes) {
      violated("an accepted header whose payload has no place");
    }
  }
  if (host_window) {
    // The receiving process's host windows: the one in the header's slot live or not, of a size
    // from the input.
    std::vector<dcuda::protocol::host_window_entry> own(dcuda::protocol::host_window_slots,
                                                        dcuda::protocol::host_window_entry{});
    const auto slot = static_cast<std::size_t>(op.window - dcuda::protocol::host_window_first_slot);
    own[slot] = {0x10000, in.take<std::uint32_t>(), in.take<std::uint8_t>() % 2u, 0};
    if (dcuda::checks::check_host_window_put(op, limits.source_process, own).empty() &&
        (own[slot].generation == 0 || op.offset < 0 || op.size < 0 ||
         static_cast<std::uint64_t>(op.offset) > own[slot].size ||
         static_cast<std::uint64_t>(op.size) >
             own[slot].size - static_cast<std::uint64_t>(op.offset))) {
      violated("a put into a host window accepted outside a live window's bytes");
    }
  }
  const bool inside =
      dcuda::protocol::carries_payload(op) && static_cast<std::uint64_t>(op.size) <= 256;
  if (message.size() != sizeof op + (inside ? static_cast<std::size_t>(op.size) : 0)) {
    violated("an accepted header whose length is not what it says");
  }
}

void announcement(dcuda_fuzz::input& in) {
  dcuda::checks::announcement_limits limits{};
  limits.source_process = in.take<std::uint8_t>() % 16;
  limits.latest_sequence = 1 + in.take<std::uint32_t>() % 1000000;
  limits.expected_sequence = limits.latest_sequence - in.take<std::uint8_t>() % 2;
  if (limits.expected_sequence < 1) limits.expected_sequence = 1;
  limits.headers_sent_before = in.take<std::uint32_t>();
  const auto message = in.bytes(4096);
  if (!dcuda::checks::check_announcement(message, limits).empty()) return;

  dcuda::checks::announcement_head head{};
  if (message.size() < sizeof head) violated("an accepted announcement shorter than its head");
  std::memcpy(&head, message.data(), sizeof head);
  if (head.sequence != limits.expected_sequence || head.sequence > limits.latest_sequence) {
    violated("an accepted announcement of a collective that is not the next one");
  }
  if (head.headers_sent < limits.headers_sent_before) {
    violated("an accepted announcement that counts fewer operations than the one before");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcuda_fuzz::input in(data, size);
  if (in.take<std::uint8_t>() % 2 == 0) {
    header(in);
  } else {
    announcement(in);
  }
  return 0;
}
