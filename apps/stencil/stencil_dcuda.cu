// The stencil in dcuda (thesis 5.5): one persistent kernel per GPU; the GPU's rows are shared out
// among its ranks, and each rank exchanges its boundary rows with the ranks that own the rows
// next to them, in whichever GPU they are. Windows of one GPU overlap (every rank of the GPU
// gives the GPU's field as its window), so a put to a rank of the same GPU copies nothing and
// only notifies; only the two ranks at a GPU's edge move data, over NVLink, while the other ranks
// compute. No rank waits for more than its two neighbours: no device-wide synchronisation.
//
//   mpirun -np 4 --bind-to none build/apps/stencil/stencil_dcuda [--nx 512 --ny 2048 --nz 64]

// One shared copy of the puts, flushes and waits in this kernel, which calls them from many
// places between its loops (src/device/call_linkage.cuh; one H100: 2.248 -> 2.179 ms per
// iteration).
#define DCUDA_CALLS_OUT_OF_LINE

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_resources.h"
#include "dcuda_device.cu.h"
#include "dcuda_host.h"
#include "dcuda_run_figures.h"
#include "mpi_process.h"
#include "rank_line.cuh"
#include "rank_phase_clock.cuh"
#include "stencil_app.h"
#include "point_walk.h"
#include "stencil_rank_stages.h"
#include "stencil_reference.h"

namespace {

using namespace stencil;

// A rank is a block of 1024 threads, two per SM: 32 registers a thread for the kernel and for the
// stages, and the SM's full 64 warps for the bandwidth-bound point loops. The CMake variable
// STENCIL_RANKS_PER_SM=1 builds one per SM (apps/stencil/CMakeLists.txt; docs/case-studies.md).
// STENCIL_THREADS_PER_RANK builds other rank sizes (an experiment: the stages' register limit
// assumes 1024 threads).
#ifndef STENCIL_THREADS_PER_RANK
#define STENCIL_THREADS_PER_RANK 1024
#endif
#ifndef STENCIL_RANKS_PER_SM
#define STENCIL_RANKS_PER_SM 2
#endif
constexpr int threads_per_rank = STENCIL_THREADS_PER_RANK;

// Tags: one per halo exchange and direction, so that every wait expects notifications from one
// neighbour only. A neighbour may run a step ahead (the next levels), and its notifications then
// queue behind the ones we wait for: they arrive in order per source.
constexpr int out_from_below_tag = 1, out_from_above_tag = 2, lap_from_above_tag = 3,
              fly_from_below_tag = 4;

struct stencil_data {
  grid_shape g;  // this GPU's part
  double* field[2];
  double* lap;  // flx is only the stages' (stencil_rank_stages.h): no other rank reads it
  double* fly;
  int process;  // this GPU's slab of the global grid
  int warmup, iterations;
  int levels_per_step;      // levels a rank takes through all three stages before the next ones
  std::uint64_t* phase_ns;  // null, or phase_count values per rank of this GPU (--phases 1)
};

// A rank's neighbours and rows (`first`..`end` of the GPU's part, apps/common/rank_line.cuh).
struct rank_layout : rank_line {
  // Byte offset of our row `row` in the window of `target`: the same address when the target is
  // on this GPU; the halo plane it reads as that row when it is on the neighbouring GPU.
  __device__ int offset_in(const grid_shape& g, int target, int row) const {
    return static_cast<int>(g.plane_start(row + (process - gpu_of(target)) * g.ny) *
                            sizeof(double));
  }
};

// Sends the stage's boundary rows, at the step's levels (contiguous in a row), to the neighbours
// that read them (put_notify: data, then the tag; the tag names the direction the data comes
// from, as the receiver sees it). The block barrier ends the stage: the next one reads rows
// other threads wrote, and a rank without neighbours to send to or wait for (one rank in all)
// makes no dcuda call in between.
__device__ void send_halo(dcuda_state& gst, const rank_layout& me, const grid_shape& g,
                          point_block step, dcuda_win win, double* field,
                          halo_directions directions, int tag_going_down, int tag_going_up,
                          rank_phase_clock& clock) {
  clock.end(phase_compute);
  __syncthreads();
  clock.end(phase_barrier);
  const int level_offset = step.k_begin * g.nx;
  const int bytes = static_cast<int>((step.k_end - step.k_begin) * g.nx * sizeof(double));
  const int level_offset_bytes = static_cast<int>(level_offset * sizeof(double));
  if (directions.first_row_down && me.below >= 0)
    dcuda_put_notify(gst, win, me.below, me.offset_in(g, me.below, me.first) + level_offset_bytes,
                     bytes, field + g.plane_start(me.first) + level_offset, tag_going_down);
  if (directions.last_row_up && me.above >= 0)
    dcuda_put_notify(gst, win, me.above, me.offset_in(g, me.above, me.end - 1) + level_offset_bytes,
                     bytes, field + g.plane_start(me.end - 1) + level_offset, tag_going_up);
  clock.end(phase_send);
}

__global__ void __launch_bounds__(threads_per_rank, STENCIL_RANKS_PER_SM)
    stencil_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  stencil_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  const grid_shape g = data->g;
  const rank_layout me{place_in_line(gst, g.ny, data->process)};

  const int window_bytes = static_cast<int>(g.field_size() * sizeof(double));
  dcuda_win field_window[2], lap_window, fly_window;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->field[0], window_bytes, &field_window[0]);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->field[1], window_bytes, &field_window[1]);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->lap, window_bytes, &lap_window);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->fly, window_bytes, &fly_window);

  // An iteration goes through the levels in steps of levels_per_step, each step all three
  // stages with their exchanges. Levels are independent 2-D problems, so a step is the whole
  // algorithm on a few levels; what one stage writes the next reads soon after, while it is
  // still in L2, where whole-grid stages would read it back from memory.
  const int step_levels = data->levels_per_step;
  auto step_at = [&](int k_begin) {
    return point_block{me.first, me.end, k_begin, min(k_begin + step_levels, g.nz)};
  };
  rank_phase_clock clock;
  auto wait_for = [&](int neighbour, int tag) {
    if (neighbour < 0) return;
    dcuda_wait_notifications(gst, tag, 1);
    clock.end(phase_wait);
  };
  auto wait_for_input_rows = [&]() {
    wait_for(me.below, out_from_below_tag);
    wait_for(me.above, out_from_above_tag);
  };

  // The input's boundary rows, read by the first iteration.
  for (int k = 0; k < g.nz; k += step_levels)
    send_halo(gst, me, g, step_at(k), field_window[0], data->field[0], out_halo(),
              out_from_above_tag, out_from_below_tag, clock);

  auto iteration = [&](int t) {
    const int now = t & 1, next = now ^ 1;
    double* out = data->field[next];
    for (int k = 0; k < g.nz; k += step_levels) {
      const point_block step = step_at(k);
      wait_for_input_rows();
      rank_laplacian(now, step.k_begin, step.k_end);
      send_halo(gst, me, g, step, lap_window, data->lap, lap_halo(), lap_from_above_tag, -1, clock);
      wait_for(me.above, lap_from_above_tag);
      rank_flux(step.k_begin, step.k_end);
      send_halo(gst, me, g, step, fly_window, data->fly, fly_halo(), -1, fly_from_below_tag, clock);
      wait_for(me.below, fly_from_below_tag);
      rank_diffusion(now, step.k_begin, step.k_end);
      send_halo(gst, me, g, step, field_window[next], out, out_halo(), out_from_above_tag,
                out_from_below_tag, clock);
    }
    // Through the network path a large put keeps its source until the proxy has copied it; the
    // rows sent are written again next iteration.
    dcuda_win_flush(gst, lap_window);
    dcuda_win_flush(gst, fly_window);
    dcuda_win_flush(gst, field_window[next]);
    clock.end(phase_send);
  };

  int t = 0;
  for (; t < data->warmup; ++t) iteration(t);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_start_cpu_timer(gst);
  clock.start(data->phase_ns != nullptr);
  for (; t < data->warmup + data->iterations; ++t) iteration(t);
  clock.store(data->phase_ns + me.local_rank * phase_count);
  for (int k = 0; k < g.nz; k += step_levels) wait_for_input_rows();
  dcuda_stop_cpu_timer(gst);

  dcuda_win_free(gst, fly_window);
  dcuda_win_free(gst, lap_window);
  dcuda_win_free(gst, field_window[1]);
  dcuda_win_free(gst, field_window[0]);
  dcuda_gpu_finish(gst);
}

int run(int argc, char** argv) {
  // MPI first, so that the result check and the report can use it also when the program runs as
  // one process without mpirun (dcuda_host_init then finds it initialised and uses it).
  mpi_session session(argc, argv, false);
  dcuda_host_context_handle dcuda;
  dcuda_host_init(argc, argv, &dcuda, stencil_kernel, threads_per_rank);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);
  const app_options options = parse_options(argc, argv, "stencil_dcuda");
  const run_setup setup = setup_from(options);
  const grid_shape g = setup.shape;

  require_equal_ranks_per_gpu(info.rank_responsible);
  if (g.ny < info.rank_responsible)
    throw std::invalid_argument("--ny " + std::to_string(g.ny) + " gives some of the " +
                                std::to_string(info.rank_responsible) +
                                " ranks of a GPU no row; use more rows or fewer ranks");
  if (g.field_size() * sizeof(double) > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("a field of " + std::to_string(g.field_size() * sizeof(double)) +
                                " bytes exceeds a dcuda window (at most 2^31 - 1 bytes)");

  const int step_levels =
      options.get_int("step_levels") == 0 ? g.nz : options.get_int("step_levels");
  if (step_levels < 1 || step_levels > g.nz)
    throw std::invalid_argument("--step_levels " + std::to_string(step_levels) +
                                ": must be 0 (all levels) or 1 to nz (" + std::to_string(g.nz) +
                                ")");

  const bool phases = options.get("phases") != 0;

  int status = 0;
  {
    device_fields fields(setup, info.process_index);
    // The windows' memory mapped into the other processes before the kernel starts: no mapping
    // while it runs, and compute-sanitizer memcheck across GPUs knows it (docs/api.md).
    for (double* window :
         {fields.field_a.get(), fields.field_b.get(), fields.lap.get(), fields.fly.get()})
      dcuda_host_share_memory(dcuda, window);
    device_array<std::uint64_t> phase_ns(phases ? info.rank_responsible * phase_count : 0);
    stencil_data data{g,
                      {fields.field_a.get(), fields.field_b.get()},
                      fields.lap.get(),
                      fields.fly.get(),
                      info.process_index,
                      setup.warmup,
                      setup.iterations,
                      step_levels,
                      phases ? phase_ns.get() : nullptr};
    // The stages read the grid and the fields from constant memory (stencil_rank_stages.h).
    set_rank_stage_data({g,
                         {fields.field_a.get(), fields.field_b.get()},
                         fields.lap.get(),
                         fields.flx.get(),
                         fields.fly.get(),
                         info.rank_responsible});
    status = each_run(
        options, [&] { fields.load_input(setup, info.process_index); },
        [&] {
          dcuda_host_run(dcuda, &data, sizeof(data));
          print_rank_phases(phase_ns, info.process_index, setup.iterations);
          return check_and_report(options, setup, dcuda_run_figures(dcuda, info),
                                  fields.result_after(setup.warmup + setup.iterations));
        });
  }
  dcuda_host_finish(dcuda);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("stencil_dcuda", [&] { return run(argc, argv); });
}
