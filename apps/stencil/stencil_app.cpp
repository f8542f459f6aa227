#include "stencil_app.h"

#include <mpi.h>

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
          {{"threads", 256, "baselines: threads per block of the stage kernels"},
           {"blocks", 0, "baselines: blocks of the stage kernels (0: one per 2048 points)"},
           {"step_levels", 0,
            "dcuda: levels a rank takes through all three stages at once (0: nz)"},
           {"pad", 0, "values of padding after each y-plane (layout experiment)"},
           {"blocks_own_rows", 0,
            "baselines: 1 gives each block a run of rows, as dcuda ranks have"},
           {"pairs", 0,
            "baselines: 1 takes two neighbouring points per thread and step, as dcuda's ranks "
            "do"},
           {"phases", 0, "dcuda: 1 prints where the ranks' time goes (rank_phase_clock.cuh)"}}));
}

run_setup setup_from(const app_options& options) {
  run_setup setup;
  setup.shape = {options.get_int("nx"), options.get_int("ny"), options.get_int("nz"),
                 options.get_int("pad")};
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
  // The kernels number a GPU's points (halo planes included) with 32 bits.
  if (g.field_size() >= (std::size_t{1} << 31))
    throw std::invalid_argument("a GPU's part of " + std::to_string(g.field_size()) +
                                " points (with halo planes) exceeds 2^31; use a smaller grid");
  return setup;
}

double deviation_from_reference(const run_setup& setup, const std::vector<double>& field,
                                int process, int processes) {
  const grid_shape& g = setup.shape;
  const grid_shape global{g.nx, g.ny * processes, g.nz, g.pad};
  const std::size_t rows_values = g.plane_size() * static_cast<std::size_t>(g.ny);
  if (rows_values > static_cast<std::size_t>(INT32_MAX))
    throw std::invalid_argument(
        "the result check gathers at most 2^31 values per GPU; use --check 0");
  std::vector<double> gathered(process == 0 ? global.field_size() : 0);
  APP_MPI(MPI_Gather(field.data() + g.plane_start(0), static_cast<int>(rows_values), MPI_DOUBLE,
                     process == 0 ? gathered.data() + global.plane_start(0) : nullptr,
                     static_cast<int>(rows_values), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  double deviation = 0;
  if (process == 0) {
    const std::vector<double> expected =
        reference_result(global, setup.seed, setup.warmup + setup.iterations);
    deviation = max_difference(global, gathered, expected);
  }
  APP_MPI(MPI_Bcast(&deviation, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  return deviation;
}

halo_messages messages_of(const grid_shape& g, const halo_directions& directions, int process,
                          int processes) {
  halo_messages messages;
  const bool below = process > 0, above = process + 1 < processes;
  if (directions.first_row_down) {
    if (below) messages.sends.push_back({0, process - 1});
    if (above) messages.receives.push_back({g.ny, process + 1});
  }
  if (directions.last_row_up) {
    if (above) messages.sends.push_back({g.ny - 1, process + 1});
    if (below) messages.receives.push_back({-1, process - 1});
  }
  return messages;
}

device_fields::device_fields(const run_setup& setup, int process)
    : field_a(setup.shape.field_size()),
      field_b(setup.shape.field_size()),
      lap(setup.shape.field_size()),
      flx(setup.shape.field_size()),
      fly(setup.shape.field_size()) {
  load_input(setup, process);
}

void device_fields::load_input(const run_setup& setup, int process) const {
  for (const device_array<double>* field : {&field_a, &field_b, &lap, &flx, &fly}) field->clear();
  const std::vector<double> initial =
      initial_field(setup.shape, setup.seed, static_cast<long long>(process) * setup.shape.ny);
  APP_CUDA(cudaMemcpy(field_a.get(), initial.data(), field_a.bytes(), cudaMemcpyHostToDevice));
  APP_CUDA(cudaDeviceSynchronize());  // before a kernel on a stream of its own reads them
}

int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const double* final_field) {
  double deviation = 0;
  if (setup.check) {
    std::vector<double> result(setup.shape.field_size());
    APP_CUDA(cudaMemcpy(result.data(), final_field, result.size() * sizeof(double),
                        cudaMemcpyDeviceToHost));
    deviation = deviation_from_reference(setup, result, run.process, run.processes);
  }
  return report_run("stencil", options, setup.iterations, run, setup.check, deviation, tolerance);
}

}  // namespace stencil
