// The particles in dcuda (thesis 5.4): one persistent kernel per GPU; the GPU's segments are
// shared out among its ranks (rank r of R owns local segments r*S/R..(r+1)*S/R-1), and each rank
// exchanges with the ranks that own the segments next to its own, on whichever GPU they are.
// Every rank of a GPU gives the GPU's whole particle memory (the four stores of
// particles_problem.h, ghosts included) as its window, so a put to a rank of the same GPU names
// the address it reads from and copies nothing: it only notifies. Only the two ranks at a GPU's
// edge move data, into the neighbouring GPU's ghost segment or ghost list, over NVLink. No rank
// waits for more than its two neighbours: no device-wide synchronisation inside the loop.
//
// The protocol of a rank per iteration (tags: ghosts, migrants; "neighbours" = the ranks below
// and above that exist):
//
//   wait ghosts (one per neighbour)  the neighbours' boundary segments of the current store are
//                                    final (they have migrated), and they have finished reading
//                                    my lists of the last iteration
//   move      reads current[first-1 .. end]   writes stay/down/up[first .. end-1]
//   send migrants: down[first] to the rank below, up[end-1] to the rank above (to another GPU
//             the count, then the particles with the notification; on this GPU only the
//             notification)
//   wait migrants (one per neighbour)  the neighbours' boundary lists are final, and they have
//                                    finished their move: nobody reads my current segments now
//   flush     (network path only: the sources of the last ghosts, which the migration rewrites,
//             and of these migrants, which the next move rewrites, have been copied out)
//   migrate   reads stay[s], up[first-1 .. end-2], down[first+1 .. end]   writes current[first
//             .. end-1]
//   send ghosts: current[first] to the rank below, current[end-1] to the rank above
//
// Why nothing is overwritten while a neighbour still reads it, without double buffering: every
// piece of data is written in one phase and read by the neighbours in the next phase, and a
// rank enters its next writing phase only after the wait that says each neighbour has left that
// reading phase. My current segments are read by the neighbours' move (iteration t) and written
// by my migration (t), which follows my wait for their migrants of t, sent after their move. My
// lists are read by the neighbours' migration (t) and written by my move (t+1), which follows my
// wait for their ghosts of t+1, sent after their migration. The same holds for the ghost slots
// the edge ranks fill on the other GPU. And each tag has at most one notification per neighbour
// outstanding (a neighbour's next one of a tag needs one of mine that I send only after consuming
// its last), so counting notifications by tag alone takes exactly one from each neighbour.
//
//   mpirun -np 4 --bind-to none build/apps/particles/particles_dcuda [--width 416 --segments 416]
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_resources.h"
#include "dcuda_arguments.h"
#include "dcuda_device.cu.h"
#include "dcuda_host.h"
#include "dcuda_run_figures.h"
#include "mpi_process.h"
#include "particles_app.h"
#include "particles_kernels.cuh"
#include "particles_reference.h"
#include "rank_line.cuh"
#include "rank_phase_clock.cuh"

namespace {

using namespace particles;

// A rank is a block of 512 threads, two per SM (64 registers each): 264 ranks on one H200, each
// thread holding up to two particles of a segment, against 132 ranks of 1024 threads holding one
// (measured on one H200 at the default size: 1.28 against 1.53 ms per iteration).
// PARTICLES_THREADS_PER_RANK=1024 builds the other; PARTICLES_RANKS_PER_SM=1 lets a 512-thread
// rank have an SM, and registers, to itself, as a block of the baselines' move kernel has.
#ifndef PARTICLES_THREADS_PER_RANK
#define PARTICLES_THREADS_PER_RANK 512
#endif
#ifndef PARTICLES_RANKS_PER_SM
#define PARTICLES_RANKS_PER_SM (1024 / PARTICLES_THREADS_PER_RANK)
#endif
constexpr int threads_per_rank = PARTICLES_THREADS_PER_RANK;
constexpr int ranks_per_sm = PARTICLES_RANKS_PER_SM;
constexpr int ghost_tag = 1, migrant_tag = 2;

struct particles_data {
  unsigned char* memory;  // the four stores of this GPU (store_layout)
  store_layout layout;
  motion m;
  run_error* error;
  int process;
  int warmup, iterations;
  std::uint64_t* phase_ns;  // null, or phase_count values per rank of this GPU (--phases 1)
};

// A rank's neighbours and segments (`first`..`end` of the GPU's, apps/common/rank_line.cuh).
struct rank_layout : rank_line {
  __device__ bool on_this_gpu(int target) const { return gpu_of(target) == process; }
  // Our local segment `segment` as the target's GPU numbers it: the same segment on this GPU,
  // a ghost (segments or -1) on the GPU below or above.
  __device__ int segment_at(int target, int segment, int segments) const {
    return segment + (process - gpu_of(target)) * segments;
  }
};

// Sends segment `segment` of store k to `target`: its count (only across GPUs: on this GPU the
// target reads our count where it is), then its particles with the notification.
__device__ void send_segment(dcuda_state& gst, const rank_layout& me, const store_layout& layout,
                             dcuda_win win, unsigned char* memory, int k, int segment, int target,
                             int tag) {
  const segment_store from = layout.store(memory, k);
  const int count = from.count(segment);
  const int there = me.segment_at(target, segment, layout.segments);
  if (!me.on_this_gpu(target))
    dcuda_put(gst, win, target, static_cast<int>(layout.count_offset(k, there)),
              static_cast<int>(sizeof(int)), &from.count(segment));
  dcuda_put_notify(gst, win, target, static_cast<int>(layout.slot_offset(k, there)),
                   count * static_cast<int>(sizeof(particle)), from.slot(segment), tag);
}

// The block barrier ends the phase: the counts sent were written by thread 0, and a rank
// without neighbours (one rank in all) makes no dcuda call between the phases.
__device__ void send_boundary(dcuda_state& gst, const rank_layout& me, const store_layout& layout,
                              dcuda_win win, unsigned char* memory, int store_down, int store_up,
                              int tag, rank_phase_clock& clock) {
  clock.end(phase_compute);
  __syncthreads();
  clock.end(phase_barrier);
  if (me.below >= 0)
    send_segment(gst, me, layout, win, memory, store_down, me.first, me.below, tag);
  if (me.above >= 0)
    send_segment(gst, me, layout, win, memory, store_up, me.end - 1, me.above, tag);
  clock.end(phase_send);
}

// The phases of a rank, each a function of its own, so that the segment loops get their registers
// to themselves rather than sharing them with the kernel's dcuda state.
__device__ __noinline__ void rank_move(const stores st, const motion m, int first, int end,
                                       run_error* error) {
  for (int s = first; s < end; ++s) move_segment(st, s, m, error);
}
__device__ __noinline__ void rank_migrate(const stores st, int first_segment, int first, int end,
                                          run_error* error) {
  for (int s = first; s < end; ++s) migrate_segment(st, s, first_segment, error);
}

__global__ void __launch_bounds__(threads_per_rank, ranks_per_sm)
    particles_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  particles_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  const store_layout layout = data->layout;
  const stores st = stores_in(data->memory, layout);
  const motion m = data->m;
  const rank_layout me{place_in_line(gst, layout.segments, data->process)};
  const int neighbours = (me.below >= 0) + (me.above >= 0);

  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->memory, static_cast<int>(layout.bytes()), &win);

  rank_phase_clock clock;
  auto wait_for_neighbours = [&](int tag) {
    if (neighbours == 0) return;
    dcuda_wait_notifications(gst, tag, neighbours);
    clock.end(phase_wait);
  };

  // The input's boundary segments, read by the first move.
  send_boundary(gst, me, layout, win, data->memory, current_store, current_store, ghost_tag, clock);

  auto iteration = [&] {
    wait_for_neighbours(ghost_tag);
    rank_move(st, m, me.first, me.end, data->error);
    send_boundary(gst, me, layout, win, data->memory, down_store, up_store, migrant_tag, clock);
    wait_for_neighbours(migrant_tag);
    // Through the network path a large put keeps its source until the proxy has copied it; the
    // migration rewrites the segments the last ghosts were sent from.
    dcuda_win_flush(gst, win);
    clock.end(phase_send);
    rank_migrate(st, m.first_segment, me.first, me.end, data->error);
    send_boundary(gst, me, layout, win, data->memory, current_store, current_store, ghost_tag,
                  clock);
  };

  int t = 0;
  for (; t < data->warmup; ++t) iteration();
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_start_cpu_timer(gst);
  clock.start(data->phase_ns != nullptr);
  for (; t < data->warmup + data->iterations; ++t) iteration();
  clock.store(data->phase_ns + me.local_rank * phase_count);
  // The last ghosts: consumed, so every notification sent is taken, and their data has arrived
  // before the host reads the result.
  if (neighbours > 0) dcuda_wait_notifications(gst, ghost_tag, neighbours);
  dcuda_stop_cpu_timer(gst);
  dcuda_win_flush(gst, win);

  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

int run(int argc, char** argv) {
  // MPI first, so that the result check and the report can use it also when the program runs as
  // one process without mpirun (dcuda_host_init then finds it initialised and uses it).
  mpi_session session(argc, argv, false);
  const app_options options = parse_options(argc, argv, "particles_dcuda");
  const run_setup setup = setup_from(options);
  // A rank per segment at most: with more ranks than segments some would own none. Unless the
  // user sets the rank count, it is capped at the segments per GPU; the GPU's resident blocks
  // still bound it (at the default size 264 ranks on an H200, below the 416 segments, so the cap
  // matters for small problems such as apps/particles/small.args, 32 segments).
  dcuda_arguments arguments(argc, argv, setup.segments);
  dcuda_host_context_handle dcuda;
  dcuda_host_init(arguments.argc(), arguments.argv(), &dcuda, particles_kernel, threads_per_rank);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);

  require_equal_ranks_per_gpu(info.rank_responsible);
  if (setup.segments < info.rank_responsible)
    throw std::invalid_argument("--segments " + std::to_string(setup.segments) +
                                " gives some of the " + std::to_string(info.rank_responsible) +
                                " ranks of a GPU no segment; use more segments or fewer ranks");
  const store_layout layout = setup.layout();
  if (layout.bytes() > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("the particle memory of a GPU, " + std::to_string(layout.bytes()) +
                                " bytes, exceeds a dcuda window (at most 2^31 - 1 bytes); lower "
                                "--capacity or --segments");

  const bool phases = options.get("phases") != 0;
  int status = 0;
  {
    device_particles state(setup, info.process_index, info.process_count);
    // The window's memory mapped into the other processes before the kernel starts: no mapping
    // while it runs, and compute-sanitizer memcheck across GPUs knows it (docs/api.md).
    dcuda_host_share_memory(dcuda, state.memory.get());
    device_array<std::uint64_t> phase_ns(phases ? info.rank_responsible * phase_count : 0);
    particles_data data{state.memory.get(),
                        layout,
                        {setup.whole(info.process_count), info.process_index * setup.segments},
                        state.error.get(),
                        info.process_index,
                        setup.warmup,
                        setup.iterations,
                        phases ? phase_ns.get() : nullptr};
    status = each_run(
        options, [&] { state.load_input(setup, info.process_index, info.process_count); },
        [&] {
          dcuda_host_run(dcuda, &data, sizeof(data));
          print_rank_phases(phase_ns, info.process_index, setup.iterations);
          return check_and_report(options, setup, dcuda_run_figures(dcuda, info), state);
        });
  }
  dcuda_host_finish(dcuda);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("particles_dcuda", [&] { return run(argc, argv); });
}
