// Communicators as the device sees them (DCUDA_COMM_WORLD, DCUDA_COMM_DEVICE), and the checks of
// the rank and tag arguments given in them.
#pragma once

#include "dcuda/detail/device/fail.cuh"
#include "dcuda/device/handles.cuh"
#include "dcuda/device/state.cuh"

namespace dcuda::device {

__device__ inline bool valid_comm(dcuda_comm comm) {
  return comm == DCUDA_COMM_WORLD || comm == DCUDA_COMM_DEVICE;
}

__device__ inline void check_comm(const dcuda_state& gst, protocol::call call, dcuda_comm comm) {
  if (!valid_comm(comm)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::bad_communicator, comm);
  }
}

__device__ inline int comm_size(const dcuda_state& gst, dcuda_comm comm) {
  return comm == DCUDA_COMM_WORLD ? gst.world_size : gst.device_ranks;
}

// Rank index within `comm` -> world rank. Wrapping, not overflowing, for any rank argument:
// it is computed before the argument is checked.
__device__ inline int world_rank_of(const dcuda_state& gst, dcuda_comm comm, int rank) {
  return comm == DCUDA_COMM_WORLD ? rank
                                  : static_cast<int>(static_cast<unsigned>(rank) +
                                                     static_cast<unsigned>(gst.rank_start));
}

// Whether a world rank runs on this GPU.
__device__ inline bool on_this_device(const dcuda_state& gst, int world_rank) {
  return static_cast<unsigned>(world_rank - gst.rank_start) <
         static_cast<unsigned>(gst.device_ranks);
}

__device__ inline void check_rank(const dcuda_state& gst, protocol::call call, dcuda_comm comm,
                                  int rank) {
  const int size = comm_size(gst, comm);
  if (rank < 0 || rank >= size) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::rank_out_of_range, rank, size, comm);
  }
}

__device__ inline void check_tag(const dcuda_state& gst, protocol::call call, int tag) {
  if (tag < 0 || tag >= protocol::tag_count) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::tag_out_of_range, tag);
  }
}

}  // namespace dcuda::device
