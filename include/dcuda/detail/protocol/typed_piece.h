// A typed put on the network path (docs/design.md, "Typed puts across nodes"). The origin's host
// proxy cuts the packed stream (the source's elements in type-map order, protocol/typed_copy.h)
// into pieces of one network chunk; its delivery agent packs each piece into pinned staging while
// the piece before it travels. Each piece travels as a typed_put (or, the last one of a
// notifying put, typed_put_notify) whose payload starts with a typed_piece_header; the receiver's
// agent unpacks it into the window with the target's layout, which the origin sent once before
// (a type_layout operation, in parts headed by a layout_part_header). Type handles mean nothing
// in another process: both headers name the target type by the origin's handle, and the receiver
// keeps the layouts it received per origin process.
//
// The agent's pack and unpack jobs read a typed_piece_job from pinned memory: the proxy writes
// it over the first typed_piece_header_bytes of the staging buffer, where the wire header goes
// (outgoing: after the pack; incoming: once the header is checked and no longer needed).
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"
#include "dcuda/detail/protocol/typed_copy.h"

namespace dcuda::protocol {

inline constexpr std::uint32_t typed_piece_header_bytes = 32;

// What a rank hands its proxy for a typed put to the network: a remote_operation (kind typed_put
// or typed_put_notify, size the packed bytes, offset the target element 0's origin) with the
// source's address, as every operation, then this in the message's second entry. The proxy
// checks both handles against its registry before it uses them.
struct typed_put_request {
  std::uint32_t source_type_id;
  std::uint32_t source_type_generation;
  std::uint32_t target_type_id;
  std::uint32_t target_type_generation;
  std::int32_t source_count;
  std::int32_t target_count;
};

// The head of a typed piece's payload on the wire; the packed bytes follow.
struct typed_piece_header {
  std::uint32_t type_id;  // the target's type, as the origin process names it
  std::uint32_t type_generation;
  std::uint64_t stream_at;  // the packed position of the piece's first byte
  std::uint64_t total;      // packed bytes of the whole put: count elements of the target type
  std::uint64_t reserved;
};
static_assert(sizeof(typed_piece_header) == typed_piece_header_bytes);

// The head of one part of a type_layout operation's payload; the part's bytes of the encoded
// layout follow. Parts come in order, the first at 0.
struct layout_part_header {
  std::uint32_t type_id;
  std::uint32_t type_generation;
  std::uint64_t encoded_bytes;  // of the whole encoding
  std::uint64_t part_at;        // where this part's bytes go in it
  std::uint64_t reserved;
};
static_assert(sizeof(layout_part_header) == typed_piece_header_bytes);

// What the delivery agent reads for a pack or an unpack job, in pinned memory: the typed side and
// its layout (device memory or pinned memory; the agent copies the struct before it uses it), and
// where the piece lies in the packed stream. The packed bytes follow it.
struct typed_piece_job {
  std::uint64_t typed;      // the address of the typed side's element 0
  std::uint64_t layout;     // the address of its type_layout
  std::uint64_t stream_at;  // the packed position of the piece's first byte
  std::uint64_t total;      // packed bytes of the whole put
};
static_assert(sizeof(typed_piece_job) == typed_piece_header_bytes);

// The copy between the typed side (`typed`, laid out as `layout`) and the contiguous piece at
// `packed` (the piece's first byte, packed position job.stream_at, `bytes` long): `packing` from
// the typed side into the piece, otherwise back. `contiguous`: contiguous_layout(job.total), kept
// by the caller. Copy packed bytes [stream_at, stream_at + bytes) of it (copy_typed_range_share):
// the contiguous side is addressed as if the whole stream lay around the piece, and only the
// piece's own bytes are touched. A word never straddles the piece's ends: the access width also
// divides both.
DCUDA_HD inline typed_copy plan_typed_piece(const typed_piece_job& job, const type_layout& layout,
                                            const type_layout& contiguous, char* packed,
                                            std::uint64_t bytes, bool packing) {
  auto* const typed = reinterpret_cast<char*>(job.typed);
  auto* const stream_origin = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(packed) -
                                                      static_cast<std::uintptr_t>(job.stream_at));
  typed_copy copy = packing ? plan_typed_copy(stream_origin, contiguous, typed, layout, 0)
                            : plan_typed_copy(typed, layout, stream_origin, contiguous, 0);
  copy.total = job.total;
  while (copy.width > 1 && ((job.stream_at | bytes) % copy.width) != 0) copy.width /= 2;
  return copy;
}

}  // namespace dcuda::protocol
