// The bulk-synchronous baselines of the stencil (thesis 5.5's MPI-CUDA, and the same with NCCL):
// each stage is a kernel over the whole GPU, followed by the halo exchange of its output with the
// neighbouring GPUs. `Exchange` is the communication (MPI or NCCL); it exposes
//   void exchange(double* field, const halo_directions& directions);  // messages_of's
//   double communication_ms();  // the time its exchanges took over the timed iterations
//   void start_timing();         // from now on, count communication time
// A column of a part is not contiguous: the exchanges pack it with pack_column (or, for MPI,
// describe it with a derived datatype) and receive it into the neighbour's x-halo, whose rows are
// contiguous.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "baseline_loop.h"
#include "cuda_resources.h"
#include "mpi_process.h"
#include "stencil_app.h"
#include "stencil_kernels.cuh"
#include "stencil_reference.h"

namespace stencil {

// One block per 2048 points (8 per thread at the default 256 threads), at most 64 K blocks.
inline int blocks_for(const grid_shape& g) {
  const std::size_t points = g.plane_size() * static_cast<std::size_t>(g.ny);
  const std::size_t blocks = (points + 2047) / 2048;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);
}

// Copies column `column` of `field` (rows 0..ny-1, every level; one value every nx) to `packed`,
// ny * nz values in an x-halo's order (row by row, levels inside a row): what the neighbour
// receives into its x-halo as it is.
__global__ inline void pack_column(grid_shape g, const double* field, int column, double* packed) {
  const std::size_t values = static_cast<std::size_t>(g.ny) * g.nz;
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < values;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int j = static_cast<int>(v / g.nz), k = static_cast<int>(v % g.nz);
    packed[v] = field[g.index(column, j, k)];
  }
}

// Values of a column message (ny * nz) and the blocks that pack one.
inline std::size_t column_values(const grid_shape& g) {
  return static_cast<std::size_t>(g.ny) * g.nz;
}
inline int column_pack_blocks(const grid_shape& g) {
  return static_cast<int>(std::min<std::size_t>((column_values(g) + 255) / 256, 1024));
}

template <typename MakeExchange>
int run_baseline(int argc, char** argv, const char* program, const char* version,
                 MakeExchange make_exchange) {
  mpi_session session(argc, argv);
  select_gpu_by_node_rank(session);
  const app_options options = parse_options(argc, argv, program);
  const run_setup setup = setup_from(options, session.rank(), session.size());
  const grid_shape g = setup.shape;

  device_fields fields(setup);
  double* lap = fields.lap.get();
  double* flx = fields.flx.get();
  double* fly = fields.fly.get();
  cuda_stream stream;
  auto exchange = make_exchange(session, setup, options, stream.get());

  double* in = fields.field_a.get();
  double* out = fields.field_b.get();
  const int threads = options.get_int("threads");
  const int blocks = options.get("blocks") > 0 ? options.get_int("blocks") : blocks_for(g);
  const bool blocks_own_rows = options.get("blocks_own_rows") != 0;
  if (blocks_own_rows && blocks > g.ny)
    throw std::invalid_argument("--blocks_own_rows 1 needs at most one block per row (" +
                                std::to_string(blocks) + " blocks, " + std::to_string(g.ny) +
                                " rows): set --blocks");
  const bool pairs = options.get("pairs") != 0;
  if (pairs && !has_pairs(g)) throw std::invalid_argument("--pairs 1 needs an even --nx and --pad");
  const auto laplacian_stage = pairs ? laplacian_kernel<true> : laplacian_kernel<false>;
  const auto flux_stage = pairs ? flux_kernel<true> : flux_kernel<false>;
  const auto diffusion_stage = pairs ? diffusion_kernel<true> : diffusion_kernel<false>;
  auto iteration = [&] {
    laplacian_stage<<<blocks, threads, 0, stream.get()>>>(g, blocks_own_rows, in, lap);
    APP_CUDA(cudaGetLastError());
    exchange.exchange(lap, lap_halo());
    flux_stage<<<blocks, threads, 0, stream.get()>>>(g, blocks_own_rows, lap, flx, fly);
    APP_CUDA(cudaGetLastError());
    exchange.exchange(flx, flx_halo());
    exchange.exchange(fly, fly_halo());
    diffusion_stage<<<blocks, threads, 0, stream.get()>>>(g, blocks_own_rows, in, flx, fly, out);
    APP_CUDA(cudaGetLastError());
    exchange.exchange(out, out_halo());
    std::swap(in, out);
  };

  return each_run(
      options, [&] { fields.load_input(setup); },
      [&] {
        in = fields.field_a.get();
        out = fields.field_b.get();
        exchange.exchange(in, out_halo());
        const loop_times times =
            time_baseline_loop(setup.warmup, setup.iterations, stream.get(), exchange, iteration);
        return check_and_report(options, setup, baseline_run_figures(version, session, times), in);
      });
}

}  // namespace stencil
