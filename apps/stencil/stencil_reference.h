// The stencil case study on the CPU: the input generator and the reference result the GPU
// versions are checked against, and a model of the distributed algorithm (a grid of parts with
// the halo exchanges of stencil_problem.h) that the CPU tests hold against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "stencil_problem.h"

namespace stencil {

// A field of shape g (field_size() values, halo planes zero) whose rows 0..ny-1 are global rows
// first_global_row.. and whose columns 0..nx-1 are global columns first_global_column.. of the
// input drawn from seed.
std::vector<double> initial_field(const grid_shape& g, std::uint64_t seed,
                                  long long first_global_row, int first_global_column = 0);

// The five fields of one iteration, each of shape g (with its x-halos).
struct fields {
  explicit fields(const grid_shape& g)
      : in(g.allocation_size()),
        out(g.allocation_size()),
        lap(g.allocation_size()),
        flx(g.allocation_size()),
        fly(g.allocation_size()) {}
  std::vector<double> in, out, lap, flx, fly;
};

// The three stages over rows j_begin..j_end-1 of one slab (its halo planes as they are).
void laplacian_rows(const grid_shape& g, const std::vector<double>& in, std::vector<double>& lap,
                    int j_begin, int j_end);
void flux_rows(const grid_shape& g, const std::vector<double>& lap, std::vector<double>& flx,
               std::vector<double>& fly, int j_begin, int j_end);
void diffusion_rows(const grid_shape& g, const std::vector<double>& in,
                    const std::vector<double>& flx, const std::vector<double>& fly,
                    std::vector<double>& out, int j_begin, int j_end);

// The reference: `iterations` iterations on the whole grid (global shape, halo planes the zero
// boundary). Returns the final field, shape global.
std::vector<double> reference_result(const grid_shape& global, std::uint64_t seed, int iterations);

// The exchanges of one iteration, each named for the field it sends: lap after stage 1, flx and
// fly after stage 2, out after stage 3 (and once before the first iteration).
struct iteration_halos {
  halo_directions lap = lap_halo(), flx = flx_halo(), fly = fly_halo(), out = out_halo();
};

// The distributed algorithm on the CPU: the grid split into `columns` x `rows` parts of
// global.nx / columns x global.ny / rows points (process_grid), each stage followed by the halo
// exchanges of its output. Returns the parts joined into one field of the global shape. With the
// exchanges of stencil_problem.h it equals reference_result exactly; with fewer it does not
// (tested).
std::vector<double> decomposed_result(const grid_shape& global, int columns, int rows,
                                      std::uint64_t seed, int iterations,
                                      const iteration_halos& halos = {});

// Largest |a - b| over rows 0..ny-1 of two fields of shape g.
double max_difference(const grid_shape& g, const std::vector<double>& a,
                      const std::vector<double>& b);

}  // namespace stencil
