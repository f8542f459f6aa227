#include "stencil_app.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "mpi_process.h"
#include "stencil_reference.h"

namespace stencil {

app_options parse_options(int argc, char** argv, const char* program) {
  return app_options(
      argc, argv, program,
      case_study_options(
          {{"nx", 512, "points in x"},
           {"ny", 2048, "rows (y) per GPU; the grid has ny * GPUs rows"},
           {"nz", 64, "levels (z)"}},
          {{"px", 1,
            "GPUs in x (the grid's columns of parts; 0: as square as the GPU count allows); the "
            "others in y"},
           {"threads", 256, "baselines: threads per block of the stage kernels"},
           {"blocks", 0, "baselines: blocks of the stage kernels (0: one per 2048 points)"},
           {"step_levels", 0,
            "dcuda: levels a rank takes through all three stages at once (0: nz)"},
           {"pad", 0, "values of padding after each y-plane (layout experiment)"},
           {"blocks_own_rows", 0,
            "baselines: 1 gives each block a run of rows, as dcuda ranks have"},
           {"pairs", 0,
            "baselines: 1 takes two neighbouring points per thread and step, as dcuda's ranks "
            "do"},
           {"mpi_datatypes", 0,
            "MPI-CUDA: 1 sends columns as an MPI vector type from a host copy of the rows (0: "
            "packed by a kernel)"},
           {"phases", 0, "dcuda: 1 prints where the ranks' time goes (rank_phase_clock.cuh)"}}));
}

int squarest_columns(int processes) {
  int columns = 1;
  for (int c = 1; c * c <= processes; ++c)
    if (processes % c == 0) columns = c;
  return columns;
}

run_setup setup_from(const app_options& options, int process, int processes) {
  run_setup setup;
  const int px = options.get_int("px");
  if (px < 0 || (px > 0 && processes % px != 0))
    throw std::invalid_argument("--px " + std::to_string(px) + " does not divide the " +
                                std::to_string(processes) +
                                " processes into columns of parts (0 picks the squarest grid)");
  const int columns = px == 0 ? squarest_columns(processes) : px;
  setup.grid = process_grid::of(columns, processes / columns, process);
  setup.shape = {options.get_int("nx"),  options.get_int("ny"),  options.get_int("nz"),
                 options.get_int("pad"), setup.grid.west() >= 0, setup.grid.east() >= 0};
  setup.iterations = options.get_int("iterations");
  setup.warmup = options.get_int("warmup");
  setup.check = options.get("check") != 0;
  setup.seed = static_cast<std::uint64_t>(options.get("seed"));
  const grid_shape& g = setup.shape;
  if (g.nx < 1 || g.ny < 1 || g.nz < 1 || g.pad < 0 || setup.iterations < 0 || setup.warmup < 0)
    throw std::invalid_argument(
        "nx, ny, nz must be at least 1 and pad, iterations, warmup at "
        "least 0 (" +
        options.summary() + ")");
  // The kernels number a GPU's points (halo planes and x-halos included) with 32 bits.
  if (g.allocation_size() >= (std::size_t{1} << 31))
    throw std::invalid_argument("a GPU's part of " + std::to_string(g.allocation_size()) +
                                " points (with halo planes) exceeds 2^31; use a smaller grid");
  // A point finds its x-halo value from its position divided by nx (grid_shape::halo_index_of).
  if (setup.grid.columns > 1 && g.pad != 0)
    throw std::invalid_argument("--pad " + std::to_string(g.pad) +
                                " with parts in x (--px): padding is for slabs only (--px 1)");
  return setup;
}

double deviation_from_reference(const run_setup& setup, const std::vector<double>& field) {
  const grid_shape& g = setup.shape;
  const process_grid& grid = setup.grid;
  const int processes = grid.columns * grid.rows;
  const grid_shape global{g.nx * grid.columns, g.ny * grid.rows, g.nz,
                          grid.columns == 1 ? g.pad : 0};
  const std::size_t rows_values = g.plane_size() * static_cast<std::size_t>(g.ny);
  if (rows_values * static_cast<std::size_t>(processes) > static_cast<std::size_t>(INT32_MAX))
    throw std::invalid_argument(
        "the result check gathers at most 2^31 values in all; use --check 0");
  const int process = grid.process();
  std::vector<double> parts(process == 0 ? rows_values * processes : 0);
  APP_MPI(MPI_Gather(field.data() + g.plane_start(0), static_cast<int>(rows_values), MPI_DOUBLE,
                     parts.data(), static_cast<int>(rows_values), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  double deviation = 0;
  if (process == 0) {
    // Each part's rows into its place in the global grid.
    std::vector<double> gathered(global.field_size(), 0.0);
    for (int p = 0; p < processes; ++p) {
      const double* part = parts.data() + static_cast<std::size_t>(p) * rows_values;
      const process_grid place = process_grid::of(grid.columns, grid.rows, p);
      const int first_column = place.x * g.nx, first_row = place.y * g.ny;
      for (int j = 0; j < g.ny; ++j)
        for (int k = 0; k < g.nz; ++k)
          std::copy_n(part + g.index(0, j, k) - g.plane_start(0), g.nx,
                      gathered.begin() + static_cast<std::ptrdiff_t>(
                                             global.index(first_column, first_row + j, k)));
    }
    const std::vector<double> expected =
        reference_result(global, setup.seed, setup.warmup + setup.iterations);
    deviation = max_difference(global, gathered, expected);
  }
  APP_MPI(MPI_Bcast(&deviation, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  return deviation;
}

halo_messages messages_of(const grid_shape& g, const halo_directions& directions,
                          const process_grid& grid) {
  halo_messages messages;
  // One way of one exchange: row or column `sent` goes to `to`, and the same of `from` arrives
  // in halo `received` (a neighbour of -1 is the grid's edge).
  auto one_way = [](auto& sends, auto& receives, bool wanted, int sent, int to, int received,
                    int from) {
    if (!wanted) return;
    if (to >= 0) sends.push_back({sent, to});
    if (from >= 0) receives.push_back({received, from});
  };
  const int below = grid.below(), above = grid.above(), west = grid.west(), east = grid.east();
  one_way(messages.sends, messages.receives, directions.first_row_down, 0, below, g.ny, above);
  one_way(messages.sends, messages.receives, directions.last_row_up, g.ny - 1, above, -1, below);
  one_way(messages.column_sends, messages.column_receives, directions.first_column_west, 0, west,
          g.nx, east);
  one_way(messages.column_sends, messages.column_receives, directions.last_column_east, g.nx - 1,
          east, -1, west);
  return messages;
}

std::size_t column_start(const grid_shape& g, int column) {
  if (column < 0) return g.west_halo_start() + g.halo_index(0, 0);
  if (column >= g.nx) return g.east_halo_start() + g.halo_index(0, 0);
  return g.index(column, 0, 0);
}

device_fields::device_fields(const run_setup& setup)
    : field_a(setup.shape.allocation_size()),
      field_b(setup.shape.allocation_size()),
      lap(setup.shape.allocation_size()),
      flx(setup.shape.allocation_size()),
      fly(setup.shape.allocation_size()) {
  load_input(setup);
}

void device_fields::load_input(const run_setup& setup) const {
  for (const device_array<double>* field : {&field_a, &field_b, &lap, &flx, &fly}) field->clear();
  const grid_shape& g = setup.shape;
  const std::vector<double> initial = initial_field(
      g, setup.seed, static_cast<long long>(setup.grid.y) * g.ny, setup.grid.x * g.nx);
  APP_CUDA(cudaMemcpy(field_a.get(), initial.data(), initial.size() * sizeof(double),
                      cudaMemcpyHostToDevice));
  APP_CUDA(cudaDeviceSynchronize());  // before a kernel on a stream of its own reads them
}

int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const double* final_field) {
  double deviation = 0;
  if (setup.check) {
    std::vector<double> result(setup.shape.field_size());
    APP_CUDA(cudaMemcpy(result.data(), final_field, result.size() * sizeof(double),
                        cudaMemcpyDeviceToHost));
    deviation = deviation_from_reference(setup, result);
  }
  return report_run("stencil", options, setup.iterations, run, setup.check, deviation, tolerance);
}

}  // namespace stencil
