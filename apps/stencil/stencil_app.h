// What the three stencil programs share on the host: their options, the problem's shape on one
// GPU, and the result check against the CPU reference (gathered on process 0).
#pragma once

#include <cstdint>
#include <vector>

#include "cuda_resources.h"
#include "options.h"
#include "mpi_process.h"
#include "stencil_problem.h"

namespace stencil {

// Sizes per GPU (weak scaling: the global grid has ny * GPUs rows). Defaults: 512 x 2048 x 64
// points per GPU, 67 M points, about a millisecond per iteration on an H200 (docs/case-studies.md
// relates them to the thesis's 128 x 320 x 26).
app_options parse_options(int argc, char** argv, const char* program);

struct run_setup {
  process_grid grid;  // where this process's part lies
  grid_shape shape;   // one GPU's part, with its x-neighbours
  int iterations = 0;
  int warmup = 0;
  bool check = false;
  std::uint64_t seed = 0;
};
// The setup of process `process` of `processes`: --px parts in x (0: as square a grid as the
// process count allows, more rows than columns where it is not square), processes / px in y.
run_setup setup_from(const app_options& options, int process, int processes);

// Columns of the squarest grid of `processes` parts: the largest divisor not above its root.
int squarest_columns(int processes);

// Largest deviation allowed from the CPU reference: the GPU contracts a*b+c into FMA where the
// CPU rounds twice; over the checked sizes and iterations the fields differ by ~1e-15.
constexpr double tolerance = 1e-10;

// Collective over MPI_COMM_WORLD: gathers every process's part of `field` (shape setup.shape,
// placed by setup.grid) on process 0, compares it with the CPU reference after warmup +
// iterations iterations, and returns the largest deviation on every process.
double deviation_from_reference(const run_setup& setup, const std::vector<double>& field);

// The five fields of one GPU in device memory (each with its halo planes and x-halos,
// allocation_size() values), zeroed, the input (this process's part) in field_a.
struct device_fields {
  explicit device_fields(const run_setup& setup);
  // Every field zeroed and the input in field_a: the state a run starts from (--runs).
  void load_input(const run_setup& setup) const;
  device_array<double> field_a, field_b, lap, flx, fly;
  // The field that holds the result after `iterations` iterations (in and out swap each one).
  const double* result_after(int iterations) const {
    return (iterations & 1) == 0 ? field_a.get() : field_b.get();
  }
};

// The end of every version's run, collective over MPI_COMM_WORLD: with --check 1, the result
// `final_field` (device memory) against the CPU reference; then process 0's result line (the
// largest time of any process). Returns the program's exit status: 1 when the check failed.
int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const double* final_field);

// The messages of one halo exchange of the process at `grid`: which of its rows and columns it
// sends to which neighbour, and into which of its halo planes and x-halos a neighbour's row or
// column arrives (see halo_directions).
struct plane_message {
  int row;   // the plane sent (0 or ny-1) or received into (ny or -1)
  int peer;  // the neighbouring process
};
struct column_message {
  int column;  // the column sent (0 or nx-1) or the x-halo received into (-1 west, nx east)
  int peer;
};
struct halo_messages {
  std::vector<plane_message> sends, receives;
  std::vector<column_message> column_sends, column_receives;
  bool empty() const {
    return sends.empty() && receives.empty() && column_sends.empty() && column_receives.empty();
  }
};
halo_messages messages_of(const grid_shape& g, const halo_directions& directions,
                          const process_grid& grid);

// Where the values of a column message lie in a field, from row 0 at level 0: a column of the
// part (0..nx-1: ny * nz values, one every nx) or an x-halo (-1, nx: ny * nz values in a row).
std::size_t column_start(const grid_shape& g, int column);

}  // namespace stencil
