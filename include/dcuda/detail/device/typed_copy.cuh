// A rank's typed copies (dcuda_pack, dcuda_unpack): the layouts looked up and checked, then the
// copy shared out among the rank's warps (protocol/typed_copy.h).
#pragma once

#include "dcuda/datatype.h"
#include "dcuda/detail/device/fail.cuh"
#include "dcuda/detail/protocol/type_table.h"
#include "dcuda/detail/protocol/typed_copy.h"
#include "dcuda/device/state.cuh"

namespace dcuda::device {

// The layout of a committed type; any other handle stops the run with the handle in the report.
__device__ inline const protocol::type_layout& checked_layout(const dcuda_state& gst,
                                                              protocol::call call,
                                                              dcuda_datatype type) {
  const protocol::type_layout* layout = protocol::committed_layout(gst.ctx->types, type);
  if (layout == nullptr) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::bad_datatype, type.id,
         type.generation);
  }
  return *layout;
}

// The same for a layout the call writes `count` elements of: they must not cover a byte twice
// (which of the two writes lands would be undecided).
__device__ inline const protocol::type_layout& checked_written_layout(const dcuda_state& gst,
                                                                      protocol::call call,
                                                                      dcuda_datatype type,
                                                                      int count) {
  const protocol::type_layout& layout = checked_layout(gst, call, type);
  if (protocol::covers_a_byte_twice(layout, static_cast<std::uint64_t>(count))) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::datatype_overlaps, type.id,
         type.generation, count, static_cast<std::int64_t>(layout.overlap_period));
  }
  return layout;
}

// Whether `count` elements of `layout` hold more bytes than 64 bits count, or reach further than
// they can address: such a call is refused before anything moves.
__device__ inline void check_typed_span(const dcuda_state& gst, protocol::call call,
                                        const protocol::type_layout& layout, int count) {
  if (!protocol::typed_span_fits(layout, static_cast<std::uint64_t>(count))) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::typed_span_too_large, count,
         static_cast<std::int64_t>(layout.size), layout.extent);
  }
}

// One access width's share of packed bytes [begin, end) of a copy, for every thread of the block
// (a rank, or the delivery agent's block), kept out of line: the rank's kernel holds a persistent
// loop's state in its registers (64 a thread at 1024 threads); called, the copy has them to
// itself, the caller's state saved once around the call rather than spilled inside the copy's
// loops, and only the width in use is entered. Warps are the workers; a block whose size is not a
// multiple of the warp has every thread work alone (a worker's lanes must all exist).
template <typename Word>
__device__ __noinline__ void copy_range_in_block_as(const protocol::typed_copy copy,
                                                    std::uint64_t begin, std::uint64_t end) {
  const auto threads = static_cast<std::uint32_t>(blockDim.x);
  const auto thread = static_cast<std::uint32_t>(threadIdx.x);
  if (threads % 32u == 0u) {
    protocol::copy_typed_range_share_as<Word>(copy, begin, end, thread / 32u, threads / 32u,
                                              thread % 32u, 32u);
  } else {
    protocol::copy_typed_range_share_as<Word>(copy, begin, end, thread, threads, 0u, 1u);
  }
}

// Packed bytes [begin, end) of the copy, every thread of the block its share, at the plan's width.
__device__ inline void copy_range_in_block(const protocol::typed_copy& copy, std::uint64_t begin,
                                           std::uint64_t end) {
  protocol::with_access_word(
      copy.width, [&](auto word) { copy_range_in_block_as<decltype(word)>(copy, begin, end); });
}

// Every thread of the rank copies its share of the whole copy.
__device__ inline void copy_in_rank(const protocol::typed_copy& copy) {
  copy_range_in_block(copy, 0, copy.total);
}

// dcuda_pack (`packing`) or dcuda_unpack: `count` elements of `type` at `typed`, to or from the
// contiguous `packed`.
__device__ inline void pack_or_unpack(const dcuda_state& gst, protocol::call call,
                                      dcuda_datatype type, int count, void* typed, void* packed,
                                      bool packing) {
  if (count < 0) fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_count, count);
  const protocol::type_layout& layout =
      packing ? checked_layout(gst, call, type) : checked_written_layout(gst, call, type, count);
  check_typed_span(gst, call, layout, count);
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * layout.size;
  const protocol::type_layout contiguous = protocol::contiguous_layout(bytes);
  auto* typed_bytes = static_cast<char*>(typed);
  auto* packed_bytes = static_cast<char*>(packed);
  copy_in_rank(packing
                   ? protocol::plan_typed_copy(packed_bytes, contiguous, typed_bytes, layout,
                                               static_cast<std::uint64_t>(count))
                   : protocol::plan_typed_copy(typed_bytes, layout, packed_bytes, contiguous, 1u));
}

}  // namespace dcuda::device
