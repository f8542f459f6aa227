// The stencil in dcuda (thesis 5.5): one persistent kernel per GPU; the GPU's rows are shared out
// among its ranks, and each rank exchanges its boundary rows with the ranks that own the rows
// next to them, in whichever GPU they are. Windows of one GPU overlap (every rank of the GPU
// gives the GPU's field as its window), so a put to a rank of the same GPU copies nothing and
// only notifies; only the two ranks at a GPU's edge move data, over NVLink, while the other ranks
// compute. No rank waits for more than its two neighbours: no device-wide synchronisation.
//
//   mpirun -np 4 --bind-to none build/apps/stencil/stencil_dcuda [--nx 512 --ny 2048 --nz 64]
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_resources.h"
#include "dcuda_device.cu.h"
#include "dcuda_host.h"
#include "mpi_process.h"
#include "stencil_app.h"
#include "stencil_kernels.cuh"
#include "stencil_reference.h"

namespace {

using namespace stencil;

// A rank is a block of 1024 threads; STENCIL_RANKS_PER_SM > 1 asks the compiler for registers
// that let that many ranks share an SM (docs/case-studies.md: occupancy).
#ifndef STENCIL_RANKS_PER_SM
#define STENCIL_RANKS_PER_SM 1
#endif
constexpr int threads_per_rank = 1024;

// Tags: the three halo exchanges of an iteration (stencil_problem.h, halo_directions).
constexpr int out_tag = 1, lap_tag = 2, fly_tag = 3;

struct stencil_data {
  grid_shape g;  // this GPU's part
  double* field[2];
  double* lap;
  double* flx;
  double* fly;
  int process;  // this GPU's slab of the global grid
  int warmup, iterations;
};

// A rank's neighbours and rows; world ranks are numbered GPU by GPU, every GPU with the same
// number of ranks (checked on the host), so rank r's GPU is r / ranks_per_gpu.
struct rank_layout {
  int below = -1, above = -1;  // world ranks owning the rows next to ours; -1 at the grid's edge
  int j_begin = 0, j_end = 0;  // our rows of the GPU's part
  int ranks_per_gpu = 0;
  int process = 0;

  // Byte offset of our row `row` in the window of `target`: the same address when the target is
  // on this GPU; the halo plane it reads as that row when it is on the neighbouring GPU.
  __device__ int offset_in(const grid_shape& g, int target, int row) const {
    const int target_process = target / ranks_per_gpu;
    return static_cast<int>(g.plane_start(row + (process - target_process) * g.ny) *
                            sizeof(double));
  }
};

// Sends the stage's boundary rows to the neighbours that read them (put_notify: data, then the
// tag). The block barrier ends the stage: the next one reads rows other threads wrote, and a rank
// without neighbours to send to or wait for (one rank in all) makes no dcuda call in between.
__device__ void send_halo(dcuda_state& gst, const rank_layout& me, const grid_shape& g,
                          dcuda_win win, double* field, halo_directions directions, int tag) {
  __syncthreads();
  const int plane_bytes = static_cast<int>(g.plane_size() * sizeof(double));
  if (directions.first_row_down && me.below >= 0)
    dcuda_put_notify(gst, win, me.below, me.offset_in(g, me.below, me.j_begin), plane_bytes,
                     field + g.plane_start(me.j_begin), tag);
  if (directions.last_row_up && me.above >= 0)
    dcuda_put_notify(gst, win, me.above, me.offset_in(g, me.above, me.j_end - 1), plane_bytes,
                     field + g.plane_start(me.j_end - 1), tag);
}

// The stages of a rank, each a function of its own: the kernel's dcuda calls keep many values
// live, and inlined into it the point loops would spill with them (64 registers per thread at
// 1024 threads); called, they get the registers to themselves.
__device__ __noinline__ void rank_laplacian(const grid_shape g, const double* in, double* lap,
                                            int j_begin, int j_end) {
  laplacian_rows(g, in, lap, j_begin, j_end, threadIdx.x, blockDim.x);
}
__device__ __noinline__ void rank_flux(const grid_shape g, const double* lap, double* flx,
                                       double* fly, int j_begin, int j_end) {
  flux_rows(g, lap, flx, fly, j_begin, j_end, threadIdx.x, blockDim.x);
}
__device__ __noinline__ void rank_diffusion(const grid_shape g, const double* in, const double* flx,
                                            const double* fly, double* out, int j_begin,
                                            int j_end) {
  diffusion_rows(g, in, flx, fly, out, j_begin, j_end, threadIdx.x, blockDim.x);
}

__global__ void __launch_bounds__(threads_per_rank, STENCIL_RANKS_PER_SM)
    stencil_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  stencil_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  const grid_shape g = data->g;
  int world_rank, world_size, local_rank, local_size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &world_size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &local_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &local_size);

  rank_layout me;
  me.ranks_per_gpu = local_size;
  me.process = data->process;
  me.j_begin = static_cast<int>(static_cast<long long>(local_rank) * g.ny / local_size);
  me.j_end = static_cast<int>(static_cast<long long>(local_rank + 1) * g.ny / local_size);
  me.below = world_rank > 0 ? world_rank - 1 : -1;
  me.above = world_rank + 1 < world_size ? world_rank + 1 : -1;
  // What each wait expects: out's rows from both neighbours, lap's from above, fly's from below.
  const int out_expected = (me.below >= 0) + (me.above >= 0);
  const int lap_expected = me.above >= 0;
  const int fly_expected = me.below >= 0;

  const int window_bytes = static_cast<int>(g.field_size() * sizeof(double));
  dcuda_win field_window[2], lap_window, fly_window;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->field[0], window_bytes, &field_window[0]);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->field[1], window_bytes, &field_window[1]);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->lap, window_bytes, &lap_window);
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->fly, window_bytes, &fly_window);

  // The input's boundary rows, read by the first iteration.
  send_halo(gst, me, g, field_window[0], data->field[0], out_halo(), out_tag);

  auto iteration = [&](int t) {
    const int now = t & 1, next = now ^ 1;
    const double* in = data->field[now];
    double* out = data->field[next];
    if (out_expected > 0) dcuda_wait_notifications(gst, out_tag, out_expected);
    rank_laplacian(g, in, data->lap, me.j_begin, me.j_end);
    send_halo(gst, me, g, lap_window, data->lap, lap_halo(), lap_tag);
    if (lap_expected > 0) dcuda_wait_notifications(gst, lap_tag, lap_expected);
    rank_flux(g, data->lap, data->flx, data->fly, me.j_begin, me.j_end);
    send_halo(gst, me, g, fly_window, data->fly, fly_halo(), fly_tag);
    if (fly_expected > 0) dcuda_wait_notifications(gst, fly_tag, fly_expected);
    rank_diffusion(g, in, data->flx, data->fly, out, me.j_begin, me.j_end);
    send_halo(gst, me, g, field_window[next], out, out_halo(), out_tag);
    // Through the network path a large put keeps its source until the proxy has copied it; the
    // rows sent are written again next iteration.
    dcuda_win_flush(gst, lap_window);
    dcuda_win_flush(gst, fly_window);
    dcuda_win_flush(gst, field_window[next]);
  };

  int t = 0;
  for (; t < data->warmup; ++t) iteration(t);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_start_cpu_timer(gst);
  for (; t < data->warmup + data->iterations; ++t) iteration(t);
  if (out_expected > 0) dcuda_wait_notifications(gst, out_tag, out_expected);
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

  int fewest_ranks = 0, most_ranks = 0;
  APP_MPI(
      MPI_Allreduce(&info.rank_responsible, &fewest_ranks, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  APP_MPI(MPI_Allreduce(&info.rank_responsible, &most_ranks, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (fewest_ranks != most_ranks)
    throw std::invalid_argument("every GPU must run the same number of ranks (here " +
                                std::to_string(fewest_ranks) + " to " + std::to_string(most_ranks) +
                                "); set DCUDA_RANKS_PER_DEVICE");
  if (g.ny < info.rank_responsible)
    throw std::invalid_argument("--ny " + std::to_string(g.ny) + " gives some of the " +
                                std::to_string(info.rank_responsible) +
                                " ranks of a GPU no row; use more rows or fewer ranks");
  if (g.field_size() * sizeof(double) > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("a field of " + std::to_string(g.field_size() * sizeof(double)) +
                                " bytes exceeds a dcuda window (at most 2^31 - 1 bytes)");

  int status = 0;
  {
    device_fields fields(setup, info.process_index);
    stencil_data data{g,
                      {fields.field_a.get(), fields.field_b.get()},
                      fields.lap.get(),
                      fields.flx.get(),
                      fields.fly.get(),
                      info.process_index,
                      setup.warmup,
                      setup.iterations};
    dcuda_host_run(dcuda, &data, sizeof(data));
    status = check_and_report(options, setup, "dcuda", info.process_count, info.process_index,
                              info.rank_responsible, dcuda_host_get_timings(dcuda).at(0), -1,
                              fields.result_after(setup.warmup + setup.iterations));
  }
  dcuda_host_finish(dcuda);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("stencil_dcuda", [&] { return run(argc, argv); });
}
