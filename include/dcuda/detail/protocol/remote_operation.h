// What crosses the network for one put, put_notify or notify: a fixed header, then the payload
// (thesis 4.2, "MPI Communication"). The header names the target by world rank and window slot;
// the receiving process resolves it to an address, so no process needs another's pointers.
// The device writes the same header into the command channel when it hands an operation to its
// host proxy (device/remote_send.cuh).
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

// typed_put, typed_put_notify and type_layout are a typed put's pieces and the target layout it
// needs on the network path (protocol/typed_piece.h): their payload starts with a 32-byte head.
enum class operation_kind : std::int32_t {
  put = 1,
  put_notify = 2,
  notify = 3,
  typed_put = 4,
  typed_put_notify = 5,
  type_layout = 6,
};

struct remote_operation {
  std::int32_t kind;           // operation_kind
  std::int32_t source_rank;    // world rank that issued it
  std::int32_t target_rank;    // world rank whose window or counter it is for
  std::int32_t window;         // window slot (agreed at creation by all ranks)
  std::int64_t offset;         // bytes into the target's window (typed: of the element 0's origin)
  std::int64_t size;           // payload bytes (0 for notify; typed: the piece's, head included)
  std::int32_t tag;            // notification tag (put_notify, notify)
  std::uint32_t operation_id;  // counted per source rank; completion is reported by it
};
static_assert(sizeof(remote_operation) == 40);

DCUDA_HD constexpr bool carries_payload(const remote_operation& op) {
  return op.kind != static_cast<std::int32_t>(operation_kind::notify) && op.size > 0;
}

DCUDA_HD constexpr bool notifies(const remote_operation& op) {
  return op.kind == static_cast<std::int32_t>(operation_kind::put_notify) ||
         op.kind == static_cast<std::int32_t>(operation_kind::notify) ||
         op.kind == static_cast<std::int32_t>(operation_kind::typed_put_notify);
}

// A piece of a typed put (its payload: a typed_piece_header, then packed bytes).
DCUDA_HD constexpr bool typed_piece(const remote_operation& op) {
  return op.kind == static_cast<std::int32_t>(operation_kind::typed_put) ||
         op.kind == static_cast<std::int32_t>(operation_kind::typed_put_notify);
}

// A part of a typed put's target layout, sent ahead of its pieces (for no window).
DCUDA_HD constexpr bool layout_part(const remote_operation& op) {
  return op.kind == static_cast<std::int32_t>(operation_kind::type_layout);
}

}  // namespace dcuda::protocol

namespace dcuda::transport {
using protocol::carries_payload;
using protocol::layout_part;
using protocol::notifies;
using protocol::operation_kind;
using protocol::remote_operation;
using protocol::typed_piece;
}  // namespace dcuda::transport
