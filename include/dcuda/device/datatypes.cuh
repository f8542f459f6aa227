// dcuda_pack, dcuda_unpack (extension): a rank moves typed data (include/dcuda/datatype.h) to
// or from a contiguous buffer, all its warps sharing the copy.
#pragma once

#include "dcuda/datatype.h"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/typed_copy.cuh"
#include "dcuda/detail/protocol/calls.h"
#include "dcuda/device/state.cuh"

// (rank). Copies `count` elements of the committed `type` at `source` to `packed`, contiguous,
// in the type map's order (count x the type's size bytes). On return every thread of the rank
// sees the packed bytes. The two buffers must not overlap.
__device__ inline void dcuda_pack(dcuda_state& gst, dcuda_datatype type, int count,
                                  const void* source, void* packed) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::pack);
  device::pack_or_unpack(gst, protocol::call::pack, type, count, const_cast<void*>(source), packed,
                         true);
  __syncthreads();
}

// (rank). The reverse: count x the type's size bytes at `packed` laid out as `count` elements of
// `type` at `target`; the bytes between the type's runs are left as they are. `type` must not
// cover a byte twice.
__device__ inline void dcuda_unpack(dcuda_state& gst, dcuda_datatype type, int count,
                                    const void* packed, void* target) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::unpack);
  device::pack_or_unpack(gst, protocol::call::unpack, type, count, target,
                         const_cast<void*>(packed), false);
  __syncthreads();
}
