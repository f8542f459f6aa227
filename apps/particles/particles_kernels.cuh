// The move and the migration of one segment on the GPU, by one thread block (a dcuda rank: its
// block, for each of its segments; a baseline kernel: one block per segment). Every particle is
// one call of the formulas in particles_problem.h, with the terms in the reference's order.
#pragma once

#include "even_share.h"
#include "particles_problem.h"

namespace particles {

// What the move needs besides the stores: the box and where the process's segments lie in it.
struct motion {
  box whole;
  int first_segment = 0;  // global index of the process's local segment 0
};

// The first error of a process wins; the host reports it after the run.
__device__ inline void record_error(run_error* error, error_kind kind, int segment,
                                    long long value) {
  if (atomicCAS(&error->kind, 0, static_cast<int>(kind)) == 0) {
    error->segment = segment;
    error->value = value;
  }
}

// Positions of the neighbourhood pass through shared memory in tiles; each thread holds up to
// particles_per_thread particles of the segment at once, so one pass over the neighbourhood serves
// blockDim.x * particles_per_thread of them (a segment of the default size, about 990, in one pass
// with 512 threads holding 2 each, or 256 threads holding 4). PARTICLES_PER_THREAD builds
// another count, for every version alike; four in 256-thread blocks was measured slower than two
// in 512-thread blocks for every version (docs/notes/case-studies-experiments.md, "The particles'
// last warp").
#ifndef PARTICLES_PER_THREAD
#define PARTICLES_PER_THREAD 2
#endif
constexpr int tile_size = 1024;
constexpr int particles_per_thread = PARTICLES_PER_THREAD;
// Where a thread's slot past the segment's end puts its stand-in: every pair with it is farther
// apart than the cutoff, so its force adds exactly zero, and every slot of the thread runs the
// same instructions (no branch per slot inside the force loop).
constexpr double far_away = 1e100;

// Stable block-wide compaction into three lists: each thread passes its particle's list (0, 1, 2,
// or -1 for none) and gets the particle's place among the block's particles of that list, in
// thread order; totals[k] is the block's count for list k. Every thread of the block calls it;
// blockDim.x is a multiple of 32.
__device__ inline int place_in_list(int list, int totals[3], int (*warp_counts)[32]) {
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned warps = blockDim.x >> 5;
  const unsigned lanes_before = (1u << lane) - 1u;
  int place = 0;
  for (int k = 0; k < 3; ++k) {
    const unsigned members = __ballot_sync(0xffffffffu, list == k);
    if (list == k) place = __popc(members & lanes_before);
    if (lane == 0) warp_counts[k][warp] = __popc(members);
  }
  __syncthreads();
  for (int k = 0; k < 3; ++k) {
    int before = 0, total = 0;
    for (unsigned w = 0; w < warps; ++w) {
      const int count = warp_counts[k][w];
      before += w < warp ? count : 0;
      total += count;
    }
    totals[k] = total;
    if (list == k) place += before;
  }
  __syncthreads();  // warp_counts is reused by the next call
  return place;
}

// The move of local segment s: reads the current store's segments s-1, s, s+1 (counts and
// particles), writes the stay, down and up lists of s and their counts. The particles of s are
// taken in passes of blockDim.x * particles_per_thread, particle first + q * blockDim.x +
// threadIdx.x in slot q of a thread, and compacted slot by slot, which keeps their order.
__device__ inline void move_segment(const stores& st, int s, const motion& m, run_error* error) {
  __shared__ double2 tile[tile_size];
  __shared__ int warp_counts[3][32];
  const int n = st.current.count(s);
  const particle* own = st.current.slot(s);
  particle* lists[3] = {st.stay.slot(s), st.down.slot(s), st.up.slot(s)};
  int filled[3] = {0, 0, 0};
  const int threads = static_cast<int>(blockDim.x);
  for (int first = 0; first < n; first += threads * particles_per_thread) {
    double x[particles_per_thread], y[particles_per_thread];
    double fx[particles_per_thread], fy[particles_per_thread];
    int held = 0;  // slots 0..held-1 of this thread hold particles of the segment
#pragma unroll
    for (int q = 0; q < particles_per_thread; ++q) {
      const int i = first + q * threads + static_cast<int>(threadIdx.x);
      fx[q] = fy[q] = 0;
      x[q] = y[q] = far_away;
      if (i < n) {
        x[q] = own[i].x;
        y[q] = own[i].y;
        held = q + 1;
      }
    }
    for (int neighbour = s - 1; neighbour <= s + 1; ++neighbour) {
      const int count = st.current.count(neighbour);
      const particle* others = st.current.slot(neighbour);
      for (int start = 0; start < count; start += tile_size) {
        const int length = min(tile_size, count - start);
        __syncthreads();  // nobody reads the previous tile any more
        for (int k = static_cast<int>(threadIdx.x); k < length; k += threads)
          tile[k] = make_double2(others[start + k].x, others[start + k].y);
        __syncthreads();
        if (held > 0) {
#pragma unroll 4
          for (int k = 0; k < length; ++k) {
            const double2 o = tile[k];
#pragma unroll
            for (int q = 0; q < particles_per_thread; ++q)
              add_force(x[q], y[q], o.x, o.y, fx[q], fy[q]);
          }
        }
      }
    }
    const int global_segment = m.first_segment + s;
    for (int q = 0; q < particles_per_thread; ++q) {
      int list = -1;
      particle moved{};
      if (q < held) {
        // The current store is not written during the move: the particle is the one loaded above.
        moved = advanced(own[first + q * threads + static_cast<int>(threadIdx.x)], fx[q], fy[q],
                         m.whole);
        direction d = direction_of(global_segment, segment_of(moved.y, m.whole));
        if (d == direction::too_far) {  // kept in its segment; the run ends with the error
          record_error(error, error_kind::too_far, global_segment, moved.id);
          d = direction::stay;
        }
        list = static_cast<int>(d);
      }
      int totals[3];
      const int place = place_in_list(list, totals, warp_counts);
      if (list >= 0) lists[list][filled[list] + place] = moved;
      for (int k = 0; k < 3; ++k) filled[k] += totals[k];
    }
  }
  if (threadIdx.x == 0) {
    st.stay.count(s) = filled[0];
    st.down.count(s) = filled[1];
    st.up.count(s) = filled[2];
  }
}

// The migration of local segment s: stay(s) ++ up(s-1) ++ down(s+1) into the current store. A
// segment over its capacity keeps what fits (so nothing is written out of bounds) and the run
// ends with the error.
__device__ inline void migrate_segment(const stores& st, int s, int first_segment,
                                       run_error* error) {
  const int stays = st.stay.count(s), from_below = st.up.count(s - 1),
            from_above = st.down.count(s + 1);
  const int total = stays + from_below + from_above;
  const int kept = min(total, st.current.capacity);
  if (total > st.current.capacity && threadIdx.x == 0)
    record_error(error, error_kind::overflow, first_segment + s, total);
  particle* to = st.current.slot(s);
  const particle* stay = st.stay.slot(s);
  const particle* below = st.up.slot(s - 1);
  const particle* above = st.down.slot(s + 1);
  for (int k = static_cast<int>(threadIdx.x); k < kept; k += static_cast<int>(blockDim.x))
    to[k] = k < stays                ? stay[k]
            : k < stays + from_below ? below[k - stays]
                                     : above[k - stays - from_below];
  if (threadIdx.x == 0) st.current.count(s) = kept;
}

// The baselines' kernels: one block per segment of the GPU (the hardware hands the blocks to
// SMs as they free up), of up to 1024 threads (--threads), so at most 64 registers per thread:
// four particles per thread would take 79 and leave room for three blocks of 256 threads per SM
// instead of four.
__global__ void __launch_bounds__(1024) move_kernel(stores st, motion m, run_error* error) {
  move_segment(st, static_cast<int>(blockIdx.x), m, error);
}
__global__ void __launch_bounds__(1024)
    migrate_kernel(stores st, int first_segment, run_error* error) {
  migrate_segment(st, static_cast<int>(blockIdx.x), first_segment, error);
}

// An experiment (--blocks N): N blocks, block b moving segments b*S/N .. (b+1)*S/N - 1, the share
// dcuda's rank b owns: a rank's static share without dcuda. Kernels of their own, so that the
// default ones above compile as they would without the experiment (a loop around move_segment
// in move_kernel made the default 10% slower).
__global__ void __launch_bounds__(1024)
    move_shares_kernel(stores st, motion m, int segments, run_error* error) {
  const int block = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
  const item_share share = even_share(block, blocks, segments);
  for (int s = share.first; s < share.end; ++s) move_segment(st, s, m, error);
}
__global__ void __launch_bounds__(1024)
    migrate_shares_kernel(stores st, int first_segment, int segments, run_error* error) {
  const int block = static_cast<int>(blockIdx.x), blocks = static_cast<int>(gridDim.x);
  const item_share share = even_share(block, blocks, segments);
  for (int s = share.first; s < share.end; ++s) migrate_segment(st, s, first_segment, error);
}

}  // namespace particles
