#include "stencil_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace stencil {

std::vector<double> initial_field(const grid_shape& g, std::uint64_t seed,
                                  long long first_global_row) {
  std::vector<double> field(g.field_size(), 0.0);
  for (int j = 0; j < g.ny; ++j)
    for (int k = 0; k < g.nz; ++k)
      for (int i = 0; i < g.nx; ++i)
        field[g.index(i, j, k)] = initial_value(seed, i, first_global_row + j, k);
  return field;
}

void laplacian_rows(const grid_shape& g, const std::vector<double>& in, std::vector<double>& lap,
                    int j_begin, int j_end) {
  for (int j = j_begin; j < j_end; ++j)
    for (int k = 0; k < g.nz; ++k)
      for (int i = 0; i < g.nx; ++i)
        lap[g.index(i, j, k)] = laplacian(in.data(), g, g.index(i, j, k), i);
}

void flux_rows(const grid_shape& g, const std::vector<double>& lap, std::vector<double>& flx,
               std::vector<double>& fly, int j_begin, int j_end) {
  for (int j = j_begin; j < j_end; ++j)
    for (int k = 0; k < g.nz; ++k)
      for (int i = 0; i < g.nx; ++i) {
        flx[g.index(i, j, k)] = x_flux(lap.data(), g, g.index(i, j, k), i);
        fly[g.index(i, j, k)] = y_flux(lap.data(), g, g.index(i, j, k));
      }
}

void diffusion_rows(const grid_shape& g, const std::vector<double>& in,
                    const std::vector<double>& flx, const std::vector<double>& fly,
                    std::vector<double>& out, int j_begin, int j_end) {
  for (int j = j_begin; j < j_end; ++j)
    for (int k = 0; k < g.nz; ++k)
      for (int i = 0; i < g.nx; ++i)
        out[g.index(i, j, k)] = diffused(in.data(), flx.data(), fly.data(), g, g.index(i, j, k), i);
}

std::vector<double> reference_result(const grid_shape& global, std::uint64_t seed, int iterations) {
  fields f(global);
  f.in = initial_field(global, seed, 0);
  for (int t = 0; t < iterations; ++t) {
    laplacian_rows(global, f.in, f.lap, 0, global.ny);
    flux_rows(global, f.lap, f.flx, f.fly, 0, global.ny);
    diffusion_rows(global, f.in, f.flx, f.fly, f.out, 0, global.ny);
    std::swap(f.in, f.out);
  }
  return f.in;
}

namespace {

// Copies row `row` of slab `from` into plane `plane` of slab `to` (both of shape g).
void copy_plane(const grid_shape& g, const std::vector<double>& from, int row,
                std::vector<double>& to, int plane) {
  std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(g.plane_start(row)), g.plane_size(),
              to.begin() + static_cast<std::ptrdiff_t>(g.plane_start(plane)));
}

// The halo exchange of one field between neighbouring slabs, as the GPU versions do it: a
// slab's first row goes to the halo plane ny of the slab below, its last row to the halo plane
// -1 of the slab above.
template <typename FieldOf>
void exchange(const grid_shape& g, std::vector<fields>& slabs, FieldOf field_of,
              const halo_directions& directions) {
  for (std::size_t s = 0; s < slabs.size(); ++s) {
    if (directions.first_row_down && s > 0)
      copy_plane(g, field_of(slabs[s]), 0, field_of(slabs[s - 1]), g.ny);
    if (directions.last_row_up && s + 1 < slabs.size())
      copy_plane(g, field_of(slabs[s]), g.ny - 1, field_of(slabs[s + 1]), -1);
  }
}

}  // namespace

std::vector<double> decomposed_result(const grid_shape& global, int parts, std::uint64_t seed,
                                      int iterations, const std::array<halo_directions, 3>& halos) {
  if (parts < 1 || global.ny % parts != 0)
    throw std::invalid_argument("decomposed_result: " + std::to_string(global.ny) +
                                " rows do not split into " + std::to_string(parts) + " slabs");
  const grid_shape g{global.nx, global.ny / parts, global.nz, global.pad};
  std::vector<fields> slabs;
  for (int s = 0; s < parts; ++s) {
    slabs.emplace_back(g);
    slabs.back().in = initial_field(g, seed, static_cast<long long>(s) * g.ny);
  }
  auto in = [](fields& f) -> std::vector<double>& { return f.in; };
  auto lap = [](fields& f) -> std::vector<double>& { return f.lap; };
  auto fly = [](fields& f) -> std::vector<double>& { return f.fly; };
  exchange(g, slabs, in, halos[2]);
  for (int t = 0; t < iterations; ++t) {
    for (auto& f : slabs) laplacian_rows(g, f.in, f.lap, 0, g.ny);
    exchange(g, slabs, lap, halos[0]);
    for (auto& f : slabs) flux_rows(g, f.lap, f.flx, f.fly, 0, g.ny);
    exchange(g, slabs, fly, halos[1]);
    for (auto& f : slabs) diffusion_rows(g, f.in, f.flx, f.fly, f.out, 0, g.ny);
    for (auto& f : slabs) std::swap(f.in, f.out);
    exchange(g, slabs, in, halos[2]);
  }
  std::vector<double> joined(global.field_size(), 0.0);
  for (int s = 0; s < parts; ++s)
    std::copy_n(slabs[static_cast<std::size_t>(s)].in.begin() +
                    static_cast<std::ptrdiff_t>(g.plane_start(0)),
                g.plane_size() * static_cast<std::size_t>(g.ny),
                joined.begin() + static_cast<std::ptrdiff_t>(global.plane_start(s * g.ny)));
  return joined;
}

double max_difference(const grid_shape& g, const std::vector<double>& a,
                      const std::vector<double>& b) {
  double largest = 0;
  for (std::size_t p = g.plane_start(0); p < g.plane_start(g.ny); ++p)
    largest = std::max(largest, std::fabs(a[p] - b[p]));
  return largest;
}

}  // namespace stencil
