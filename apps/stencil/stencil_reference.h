// The stencil case study on the CPU: the input generator and the reference result the GPU
// versions are checked against, and a model of the distributed algorithm (slabs of rows with the
// halo exchanges of stencil_problem.h) that the CPU tests hold against the reference.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "stencil_problem.h"

namespace stencil {

// A field of shape g (halo planes zero) whose rows 0..ny-1 are global rows
// first_global_row..first_global_row+ny-1 of the input drawn from seed.
std::vector<double> initial_field(const grid_shape& g, std::uint64_t seed,
                                  long long first_global_row);

// The five fields of one iteration, each of shape g.
struct fields {
  explicit fields(const grid_shape& g)
      : in(g.field_size()),
        out(g.field_size()),
        lap(g.field_size()),
        flx(g.field_size()),
        fly(g.field_size()) {}
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

// The distributed algorithm on the CPU: the grid split into `parts` slabs of global.ny / parts
// rows, each stage followed by the halo exchange named for it (halos[0] after stage 1, [1] after
// stage 2, [2] after stage 3 and once before the first iteration). Returns the slabs joined into
// one field of the global shape. With the exchanges of stencil_problem.h it equals
// reference_result exactly; with fewer it does not (tested).
std::vector<double> decomposed_result(const grid_shape& global, int parts, std::uint64_t seed,
                                      int iterations,
                                      const std::array<halo_directions, 3>& halos = {
                                          lap_halo(), fly_halo(), out_halo()});

// Largest |a - b| over rows 0..ny-1 of two fields of shape g.
double max_difference(const grid_shape& g, const std::vector<double>& a,
                      const std::vector<double>& b);

}  // namespace stencil
