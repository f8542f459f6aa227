// A rank's place in a one-dimensional decomposition (the stencil's rows, the particles'
// segments): world ranks form a line, GPU by GPU, every GPU with the same number of ranks
// (require_equal_ranks_per_gpu checks it on the host), and each rank owns a contiguous share of
// its GPU's items, as even as integer division makes it (even_share.h).
#pragma once

#include "dcuda_device.cu.h"
#include "even_share.h"

struct rank_line {
  int below = -1, above = -1;  // world ranks next to ours in the line; -1 at its ends
  int first = 0, end = 0;      // our share of the GPU's items
  int local_rank = 0;          // in DCUDA_COMM_DEVICE
  int ranks_per_gpu = 0;
  int process = 0;  // our GPU's place in the line

  __device__ int gpu_of(int world_rank) const { return world_rank / ranks_per_gpu; }
};

// Called by every thread of the rank (the dcuda_comm_* calls are the rank's).
__device__ inline rank_line place_in_line(dcuda_state& gst, int items, int process) {
  int world_rank, world_size, local_rank, local_size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &world_size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &local_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &local_size);
  rank_line me;
  me.below = world_rank > 0 ? world_rank - 1 : -1;
  me.above = world_rank + 1 < world_size ? world_rank + 1 : -1;
  const item_share share = even_share(local_rank, local_size, items);
  me.first = share.first;
  me.end = share.end;
  me.local_rank = local_rank;
  me.ranks_per_gpu = local_size;
  me.process = process;
  return me;
}
