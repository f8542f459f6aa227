// Who sends to whom in alltoall_bandwidth, and where each put lands: one definition for the
// benchmark's kernel (nvcc) and for its CPU test (tests/bench/alltoall_schedule_test.cpp, g++).
//
// P GPUs (one process each, process g drives GPU g) run R ranks each; rank r of GPU g is world
// rank g * R + r. In one pass, rank r of GPU g puts K messages of `size` bytes to rank r of each
// other GPU g + s (mod P), s = 1..P-1 (the step), and receives K from rank r of each GPU g - s.
// Puts are interleaved by put index, and the rotation starts at a step that depends on the rank,
// so that at any moment the ranks of one GPU write to all P - 1 others, not all to the same one.
//
// Each taking part rank exposes one window of P areas of K * size bytes:
//
//   [source: the K slots it sends][from step 1: GPU g - 1]...[from step P-1: GPU g - (P-1)]
//
// A sender's put to step s, slot j, copies its source slot j into the target's area s, slot j:
// the area of step s at the target belongs to this one origin, so origins never overwrite each
// other, and every put of a pass has a destination of its own.
#pragma once

#ifdef __CUDACC__
#define ALLTOALL_HD __host__ __device__
#else
#define ALLTOALL_HD
#endif

namespace dcuda_bench {

struct alltoall_schedule {
  int gpus;             // P, at least 2
  int ranks_per_gpu;    // R: ranks 0..R-1 of every GPU take part
  int puts_per_target;  // K: puts per pass from one rank to each of its P - 1 targets
  int size;             // bytes of one put

  ALLTOALL_HD int targets() const { return gpus - 1; }
  // Puts one rank makes in a pass, and data notifications it waits for (as many arrive).
  ALLTOALL_HD int puts_per_pass() const { return puts_per_target * targets(); }
  // Bytes of one area: the source, or what one origin puts in a pass.
  ALLTOALL_HD int area_bytes() const { return puts_per_target * size; }
  ALLTOALL_HD int window_bytes() const { return gpus * area_bytes(); }

  ALLTOALL_HD int world_rank(int gpu, int rank) const { return gpu * ranks_per_gpu + rank; }
  ALLTOALL_HD int target_gpu(int gpu, int step) const { return (gpu + step) % gpus; }
  ALLTOALL_HD int origin_gpu(int gpu, int step) const { return (gpu - step + gpus) % gpus; }

  // Put `put` (0..puts_per_pass() - 1) of rank `rank`: its step (1..P-1) and its slot (0..K-1).
  // Consecutive puts take consecutive steps, so the K puts to one target are P - 1 puts apart
  // and take slots 0..K-1 in order.
  ALLTOALL_HD int step_of_put(int rank, int put) const { return 1 + (put + rank) % targets(); }
  ALLTOALL_HD int slot_of_put(int put) const { return put / targets(); }

  // Offsets in the window: of source slot `slot`, and of the area that the origin `step` GPUs
  // back owns at a receiver (a sender puts to step s at area_offset(s) of its target).
  ALLTOALL_HD int source_offset(int slot) const { return slot * size; }
  ALLTOALL_HD int area_offset(int step) const { return step * area_bytes(); }
  ALLTOALL_HD int destination_offset(int step, int slot) const {
    return area_offset(step) + slot * size;
  }
};

}  // namespace dcuda_bench
