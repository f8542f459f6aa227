// dcuda_pack, dcuda_unpack, dcuda_put_typed, dcuda_put_notify_typed (extension): a rank moves
// typed data (include/dcuda/datatype.h) to or from a contiguous buffer, or from its window into
// another rank's, all its warps sharing the copy.
#pragma once

#include "dcuda/datatype.h"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/typed_copy.cuh"
#include "dcuda/detail/device/typed_put_path.cuh"
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

// (rank). Copies the data of `source_count` elements of the committed `source_type` at `source`
// (inside the caller's window `win`) into `target_count` elements of `target_type` whose element 0
// starts `offset` bytes into the window of rank `rank`; the packed bytes are matched in order,
// and both sides must hold as many. Every byte either type touches must lie inside its window;
// the target's elements must not cover a byte twice, and the source and the target must not
// overlap. The rank's warps copy from one layout straight
// into the other (a target on this GPU or on a peer GPU of the node; over the network path not
// yet). Complete on return, ordered with the rank's other puts to the target, as dcuda_put.
__device__ inline void dcuda_put_typed(dcuda_state& gst, dcuda_win win, int rank, int offset,
                                       int target_count, dcuda_datatype target_type,
                                       const void* source, int source_count,
                                       dcuda_datatype source_type) {
  using namespace dcuda;
  const device::typed_put put{win,         rank,   offset,       target_count,
                              target_type, source, source_count, source_type};
  if (threadIdx.x == 0) device::plan_typed_put(gst, protocol::call::put_typed, put, 0);
  device::enter_rank_call(gst.ctx, protocol::call::put_typed);
  device::typed_put_along(gst, protocol::call::put_typed, put, false, 0);
}

// (rank). dcuda_put_typed, then one notification with `tag` at the target: a rank that has
// consumed it sees every byte of the typed data.
__device__ inline void dcuda_put_notify_typed(dcuda_state& gst, dcuda_win win, int rank, int offset,
                                              int target_count, dcuda_datatype target_type,
                                              const void* source, int source_count,
                                              dcuda_datatype source_type, int tag) {
  using namespace dcuda;
  const device::typed_put put{win,         rank,   offset,       target_count,
                              target_type, source, source_count, source_type};
  if (threadIdx.x == 0) device::plan_typed_put(gst, protocol::call::put_notify_typed, put, tag);
  device::enter_rank_call(gst.ctx, protocol::call::put_notify_typed);
  device::typed_put_along(gst, protocol::call::put_notify_typed, put, true, tag);
}
