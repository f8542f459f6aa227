// The stencil in dcuda (thesis 5.5): one persistent kernel per GPU; the GPU's rows are shared out
// among its ranks, and each rank exchanges its boundary rows with the ranks that own the rows
// next to them, in whichever GPU they are. Windows of one GPU overlap (every rank of the GPU
// gives the GPU's field as its window), so a put to a rank of the same GPU copies nothing and
// only notifies; only the two ranks at a GPU's edge move data, over NVLink, while the other ranks
// compute. With parts in x too (--px), every rank also sends its rows' first and last column to
// the rank with the same rows on the GPU to its west and east: a typed put (dcuda_put_notify_typed)
// from the strided column straight into the neighbour's x-halo, no packing. No rank waits for
// more than its four neighbours: no device-wide synchronisation.
//
//   mpirun -np 4 --bind-to none build/apps/stencil/stencil_dcuda [--nx 512 --ny 2048 --nz 64]
//   mpirun -np 4 --bind-to none build/apps/stencil/stencil_dcuda --px 2   (2 x 2 GPUs)

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
              fly_from_below_tag = 4, out_from_west_tag = 5, out_from_east_tag = 6,
              lap_from_east_tag = 7, flx_from_west_tag = 8;

// The tags a field's halo messages carry, by the way they go (-1: that way sends nothing). A
// message going down comes from above, as the receiver sees it.
struct halo_tags {
  int going_down, going_up, going_west, going_east;
};
__device__ constexpr halo_tags out_tags() {
  return {out_from_above_tag, out_from_below_tag, out_from_east_tag, out_from_west_tag};
}
__device__ constexpr halo_tags lap_tags() {
  return {lap_from_above_tag, -1, lap_from_east_tag, -1};
}
__device__ constexpr halo_tags flx_tags() {
  return {-1, -1, -1, flx_from_west_tag};
}
__device__ constexpr halo_tags fly_tags() {
  return {-1, fly_from_below_tag, -1, -1};
}

// The layouts of a rank's column at one step's levels, element by element (an element: a row):
// in the field, a level every nx values and a row every plane; in an x-halo, the levels in a row
// and a row every nz values. DCUDA_DATATYPE_NULL without parts in x.
struct column_types {
  dcuda_datatype in_field = DCUDA_DATATYPE_NULL;
  dcuda_datatype in_halo = DCUDA_DATATYPE_NULL;
};

struct stencil_data {
  grid_shape g;       // this GPU's part
  process_grid grid;  // where it lies
  double* field[2];
  double* lap;
  double* flx;
  double* fly;
  int warmup, iterations;
  int levels_per_step;  // levels a rank takes through all three stages before the next ones
  // The column types of a step of levels_per_step levels, and of the last step where nz is not
  // a multiple of it.
  column_types full_step, last_step;
  std::uint64_t* phase_ns;  // null, or phase_count values per rank of this GPU (--phases 1)
};

// A rank's neighbours and rows (`first`..`end` of the GPU's part, apps/common/rank_line.cuh). In
// y the ranks of a column of GPUs form a line (below, above); in x a rank's neighbours are the
// ranks with its rows on the GPUs to its west and east (every GPU has as many ranks and rows).
struct rank_layout : rank_line {
  int west = -1, east = -1;
  process_grid grid;

  // Byte offset of our row `row` in the window of `target` (a rank of this GPU, or of the GPU
  // below or above): the same address on this GPU; the halo plane it reads as that row on the
  // neighbouring GPU.
  __device__ int offset_in(const grid_shape& g, int target, int row) const {
    const int target_y = gpu_of(target) / grid.columns;
    return static_cast<int>(g.plane_start(row + (grid.y - target_y) * g.ny) * sizeof(double));
  }
};

// Called by every thread of the rank.
__device__ rank_layout place_in_grid(dcuda_state& gst, const grid_shape& g,
                                     const process_grid& grid) {
  rank_layout me{place_in_line(gst, g.ny, grid.process())};
  me.grid = grid;
  const int ranks = me.ranks_per_gpu;
  // The line's neighbours across a GPU's edge are the next GPU's; ours are those of the GPUs
  // below and above (the same with one column of GPUs).
  if (me.local_rank == 0) me.below = grid.below() >= 0 ? grid.below() * ranks + ranks - 1 : -1;
  if (me.local_rank == ranks - 1) me.above = grid.above() >= 0 ? grid.above() * ranks : -1;
  me.west = grid.west() >= 0 ? grid.west() * ranks + me.local_rank : -1;
  me.east = grid.east() >= 0 ? grid.east() * ranks + me.local_rank : -1;
  return me;
}

// Ends a stage: every thread's points are written before any is sent or read by the next stage.
// A rank without neighbours to send to or wait for (one rank in all) makes no dcuda call between
// the stages, so the barrier is needed on its own.
__device__ void end_stage(rank_phase_clock& clock) {
  clock.end(phase_compute);
  __syncthreads();
  clock.end(phase_barrier);
}

// Sends the stage's boundary rows and columns, at the step's levels, to the neighbours that read
// them (put_notify: data, then the tag; the tag names the direction the data comes from, as the
// receiver sees it). A row's levels are contiguous: a put. A column's are not: a typed put from
// the column into the neighbour's x-halo facing us, each row of the rank one element.
__device__ void send_halo(dcuda_state& gst, const rank_layout& me, const grid_shape& g,
                          point_block step, dcuda_win win, double* field,
                          halo_directions directions, halo_tags tags, const column_types& columns,
                          rank_phase_clock& clock) {
  const int level_offset = step.k_begin * g.nx;
  const int bytes = static_cast<int>((step.k_end - step.k_begin) * g.nx * sizeof(double));
  const int level_offset_bytes = static_cast<int>(level_offset * sizeof(double));
  if (directions.first_row_down && me.below >= 0)
    dcuda_put_notify(gst, win, me.below, me.offset_in(g, me.below, me.first) + level_offset_bytes,
                     bytes, field + g.plane_start(me.first) + level_offset, tags.going_down);
  if (directions.last_row_up && me.above >= 0)
    dcuda_put_notify(gst, win, me.above, me.offset_in(g, me.above, me.end - 1) + level_offset_bytes,
                     bytes, field + g.plane_start(me.end - 1) + level_offset, tags.going_up);
  const int rows = me.end - me.first;
  const int halo_offset = static_cast<int>(g.halo_index(me.first, step.k_begin) * sizeof(double));
  if (directions.first_column_west && me.west >= 0)
    dcuda_put_notify_typed(gst, win, me.west,
                           static_cast<int>(g.east_halo_start() * sizeof(double)) + halo_offset,
                           rows, columns.in_halo, field + g.index(0, me.first, step.k_begin), rows,
                           columns.in_field, tags.going_west);
  if (directions.last_column_east && me.east >= 0)
    dcuda_put_notify_typed(gst, win, me.east,
                           static_cast<int>(g.west_halo_start() * sizeof(double)) + halo_offset,
                           rows, columns.in_halo, field + g.index(g.nx - 1, me.first, step.k_begin),
                           rows, columns.in_field, tags.going_east);
  clock.end(phase_send);
}

__global__ void __launch_bounds__(threads_per_rank, STENCIL_RANKS_PER_SM)
    stencil_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  stencil_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  const grid_shape g = data->g;
  const rank_layout me = place_in_grid(gst, g, data->grid);

  // A window is a whole field with its halo planes and x-halos: a typed put's source (a column)
  // and target (an x-halo) lie in the same window.
  const int window_bytes = static_cast<int>(g.allocation_size() * sizeof(double));
  dcuda_win field_window[2], lap_window, flx_window, fly_window;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->field[0], window_bytes, &field_window[0]);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->field[1], window_bytes, &field_window[1]);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->lap, window_bytes, &lap_window);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->flx, window_bytes, &flx_window);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->fly, window_bytes, &fly_window);

  // An iteration goes through the levels in steps of levels_per_step, each step all three
  // stages with their exchanges. Levels are independent 2-D problems, so a step is the whole
  // algorithm on a few levels; what one stage writes the next reads soon after, while it is
  // still in L2, where whole-grid stages would read it back from memory.
  const int step_levels = data->levels_per_step;
  auto step_at = [&](int k_begin) {
    return point_block{me.first, me.end, k_begin, min(k_begin + step_levels, g.nz)};
  };
  auto columns_of = [&](point_block step) -> const column_types& {
    return step.k_end - step.k_begin == step_levels ? data->full_step : data->last_step;
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
    wait_for(me.west, out_from_west_tag);
    wait_for(me.east, out_from_east_tag);
  };

  // The input's boundary rows and columns, read by the first iteration.
  for (int k = 0; k < g.nz; k += step_levels) {
    end_stage(clock);
    send_halo(gst, me, g, step_at(k), field_window[0], data->field[0], out_halo(), out_tags(),
              columns_of(step_at(k)), clock);
  }

  auto iteration = [&](int t) {
    const int now = t & 1, next = now ^ 1;
    double* out = data->field[next];
    for (int k = 0; k < g.nz; k += step_levels) {
      const point_block step = step_at(k);
      const column_types& columns = columns_of(step);
      wait_for_input_rows();
      rank_laplacian(now, step.k_begin, step.k_end);
      end_stage(clock);
      send_halo(gst, me, g, step, lap_window, data->lap, lap_halo(), lap_tags(), columns, clock);
      wait_for(me.above, lap_from_above_tag);
      wait_for(me.east, lap_from_east_tag);
      rank_flux(step.k_begin, step.k_end);
      end_stage(clock);
      send_halo(gst, me, g, step, fly_window, data->fly, fly_halo(), fly_tags(), columns, clock);
      send_halo(gst, me, g, step, flx_window, data->flx, flx_halo(), flx_tags(), columns, clock);
      wait_for(me.below, fly_from_below_tag);
      wait_for(me.west, flx_from_west_tag);
      rank_diffusion(now, step.k_begin, step.k_end);
      end_stage(clock);
      send_halo(gst, me, g, step, field_window[next], out, out_halo(), out_tags(), columns, clock);
    }
    // Through the network path a large put keeps its source until the proxy has copied it; the
    // rows and columns sent are written again next iteration.
    dcuda_win_flush(gst, lap_window);
    dcuda_win_flush(gst, flx_window);
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
  dcuda_win_free(gst, flx_window);
  dcuda_win_free(gst, lap_window);
  dcuda_win_free(gst, field_window[1]);
  dcuda_win_free(gst, field_window[0]);
  dcuda_gpu_finish(gst);
}

// The column types of `levels` levels (none for 0), freed with their owner.
class column_layouts {
 public:
  column_layouts(const grid_shape& g, int levels) {
    if (levels == 0) return;
    // In the field: `levels` values nx apart; one element per row, a plane apart.
    dcuda_datatype levels_in_field;
    dcuda_type_vector(levels, 1, g.nx, DCUDA_DOUBLE, &levels_in_field);
    types_.in_field = one_element_per_row(levels_in_field, g.plane_size());
    // In an x-halo: `levels` values in a row; one element per row, nz values apart.
    dcuda_datatype levels_in_halo;
    dcuda_type_contiguous(levels, DCUDA_DOUBLE, &levels_in_halo);
    types_.in_halo = one_element_per_row(levels_in_halo, static_cast<std::size_t>(g.nz));
  }
  ~column_layouts() {
    if (types_.in_field.id != DCUDA_DATATYPE_NULL.id) dcuda_type_free(&types_.in_field);
    if (types_.in_halo.id != DCUDA_DATATYPE_NULL.id) dcuda_type_free(&types_.in_halo);
  }
  column_layouts(const column_layouts&) = delete;
  column_layouts& operator=(const column_layouts&) = delete;
  column_types types() const { return types_; }

 private:
  // `levels` resized to `row_values` doubles and committed; `levels` itself is freed (the resized
  // type keeps what it needs).
  static dcuda_datatype one_element_per_row(dcuda_datatype levels, std::size_t row_values) {
    dcuda_datatype row;
    dcuda_type_resized(levels, 0, static_cast<std::int64_t>(row_values * sizeof(double)), &row);
    dcuda_type_free(&levels);
    dcuda_type_commit(&row);
    return row;
  }

  column_types types_;
};

int run(int argc, char** argv) {
  // MPI first, so that the result check and the report can use it also when the program runs as
  // one process without mpirun (dcuda_host_init then finds it initialised and uses it).
  mpi_session session(argc, argv, false);
  dcuda_host_context_handle dcuda;
  dcuda_host_init(argc, argv, &dcuda, stencil_kernel, threads_per_rank);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);
  const app_options options = parse_options(argc, argv, "stencil_dcuda");
  const run_setup setup = setup_from(options, info.process_index, info.process_count);
  const grid_shape g = setup.shape;

  require_equal_ranks_per_gpu(info.rank_responsible);
  if (g.ny < info.rank_responsible)
    throw std::invalid_argument("--ny " + std::to_string(g.ny) + " gives some of the " +
                                std::to_string(info.rank_responsible) +
                                " ranks of a GPU no row; use more rows or fewer ranks");
  if (g.allocation_size() * sizeof(double) > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("a field of " +
                                std::to_string(g.allocation_size() * sizeof(double)) +
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
    device_fields fields(setup);
    // The windows' memory mapped into the other processes before the kernel starts: no mapping
    // while it runs, and compute-sanitizer memcheck across GPUs knows it (docs/api.md).
    for (double* window : {fields.field_a.get(), fields.field_b.get(), fields.lap.get(),
                           fields.flx.get(), fields.fly.get()})
      dcuda_host_share_memory(dcuda, window);
    device_array<std::uint64_t> phase_ns(phases ? info.rank_responsible * phase_count : 0);
    // Parts in x send columns: their types, committed for the whole program.
    const bool columns = setup.grid.columns > 1;
    const column_layouts full_step(g, columns ? step_levels : 0);
    const column_layouts last_step(g, columns && g.nz % step_levels != 0 ? g.nz % step_levels : 0);
    stencil_data data{g,
                      setup.grid,
                      {fields.field_a.get(), fields.field_b.get()},
                      fields.lap.get(),
                      fields.flx.get(),
                      fields.fly.get(),
                      setup.warmup,
                      setup.iterations,
                      step_levels,
                      full_step.types(),
                      last_step.types(),
                      phases ? phase_ns.get() : nullptr};
    // The stages read the grid and the fields from constant memory (stencil_rank_stages.h).
    set_rank_stage_data({g,
                         {fields.field_a.get(), fields.field_b.get()},
                         fields.lap.get(),
                         fields.flx.get(),
                         fields.fly.get(),
                         info.rank_responsible});
    status = each_run(
        options, [&] { fields.load_input(setup); },
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
