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
  grid_shape shape;  // one GPU's part
  int iterations = 0;
  int warmup = 0;
  bool check = false;
  std::uint64_t seed = 0;
};
run_setup setup_from(const app_options& options);

// Largest deviation allowed from the CPU reference: the GPU contracts a*b+c into FMA where the
// CPU rounds twice; over the checked sizes and iterations the fields differ by ~1e-15.
constexpr double tolerance = 1e-10;

// Collective over MPI_COMM_WORLD: gathers every process's rows of `field` (shape setup.shape,
// process p owning global rows p*ny..) on process 0, compares them with the CPU reference after
// warmup + iterations iterations, and returns the largest deviation on every process.
double deviation_from_reference(const run_setup& setup, const std::vector<double>& field,
                                int process, int processes);

// The five fields of one GPU in device memory, zeroed, the input (this process's slab) in
// field_a.
struct device_fields {
  device_fields(const run_setup& setup, int process);
  // Every field zeroed and the input in field_a: the state a run starts from (--runs).
  void load_input(const run_setup& setup, int process) const;
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

// The messages of one halo exchange of a process that owns slab `process` of `processes`: which
// of its rows it sends to which neighbour, and into which of its halo planes a neighbour's row
// arrives (see halo_directions).
struct plane_message {
  int row;   // the plane sent (0 or ny-1) or received into (ny or -1)
  int peer;  // the neighbouring process
};
struct halo_messages {
  std::vector<plane_message> sends, receives;
};
halo_messages messages_of(const grid_shape& g, const halo_directions& directions, int process,
                          int processes);

}  // namespace stencil
