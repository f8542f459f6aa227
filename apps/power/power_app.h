// What the three power-iteration programs share on the host: options and sizes (spmv's: the same
// matrix, weak-scaled the same way, spmv_app.h), the starting state, and the result check against
// the CPU reference (gathered on process 0).
#pragma once

#include <vector>

#include "options.h"
#include "power_reference.h"
#include "spmv_app.h"

namespace power {

using spmv::run_setup;

// spmv's options and defaults (n = 262144 per GPU at density 0.3%: about 1.6 ms per product on an
// H200; the thesis used spmv's 10816 x 10816 blocks here too).
app_options parse_options(int argc, char** argv, const char* program, int default_threads);

// This process's piece of b_0 (the first row's; zero elsewhere) and fac_0 (every process
// computes it from the whole b_0, in the reference's order).
std::vector<double> initial_piece(const run_setup& setup, int process);
double initial_fac(const run_setup& setup);

// The end of every version's run, collective over MPI_COMM_WORLD: with --check 1, the first row's
// b (`device_b`, block_cols values in device memory; other rows' are ignored) and process 0's fac
// against the CPU reference after warmup + iterations iterations; then process 0's result line.
// Returns 1 when the check failed.
int check_and_report(const app_options& options, const run_setup& setup, const run_figures& run,
                     const double* device_b, double fac);

}  // namespace power
