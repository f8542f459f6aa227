#include "stencil_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace stencil {

std::vector<double> initial_field(const grid_shape& g, std::uint64_t seed,
                                  long long first_global_row, int first_global_column) {
  std::vector<double> field(g.field_size(), 0.0);
  for (int j = 0; j < g.ny; ++j)
    for (int k = 0; k < g.nz; ++k)
      for (int i = 0; i < g.nx; ++i)
        field[g.index(i, j, k)] =
            initial_value(seed, first_global_column + i, first_global_row + j, k);
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
  std::copy_n(initial_field(global, seed, 0).begin(), global.field_size(), f.in.begin());
  for (int t = 0; t < iterations; ++t) {
    laplacian_rows(global, f.in, f.lap, 0, global.ny);
    flux_rows(global, f.lap, f.flx, f.fly, 0, global.ny);
    diffusion_rows(global, f.in, f.flx, f.fly, f.out, 0, global.ny);
    std::swap(f.in, f.out);
  }
  return f.in;
}

namespace {

// The part at (x, y) of a columns x rows grid, with its fields.
struct part {
  process_grid place;
  fields f;
};

// The halo exchange of one field between neighbouring parts, as the GPU versions do it: a part's
// first row goes to the halo plane ny of the part below, its last row to the halo plane -1 of the
// part above; its first column to the east x-halo of the part to its west, its last column to
// the west x-halo of the part to its east.
template <typename FieldOf>
void exchange(const grid_shape& g, std::vector<part>& parts, FieldOf field_of,
              const halo_directions& directions) {
  auto plane = [&](part& from, int row, part& to, int halo_row) {
    std::copy_n(field_of(from.f).begin() + static_cast<std::ptrdiff_t>(g.plane_start(row)),
                g.plane_size(),
                field_of(to.f).begin() + static_cast<std::ptrdiff_t>(g.plane_start(halo_row)));
  };
  auto column = [&](part& from, int i, part& to, std::size_t halo_start) {
    for (int j = 0; j < g.ny; ++j)
      for (int k = 0; k < g.nz; ++k)
        field_of(to.f)[halo_start + g.halo_index(j, k)] = field_of(from.f)[g.index(i, j, k)];
  };
  for (part& p : parts) {
    const process_grid& at = p.place;
    if (directions.first_row_down && at.below() >= 0) plane(p, 0, parts[at.below()], g.ny);
    if (directions.last_row_up && at.above() >= 0) plane(p, g.ny - 1, parts[at.above()], -1);
    if (directions.first_column_west && at.west() >= 0)
      column(p, 0, parts[at.west()], g.east_halo_start());
    if (directions.last_column_east && at.east() >= 0)
      column(p, g.nx - 1, parts[at.east()], g.west_halo_start());
  }
}

}  // namespace

std::vector<double> decomposed_result(const grid_shape& global, int columns, int rows,
                                      std::uint64_t seed, int iterations,
                                      const iteration_halos& halos) {
  if (columns < 1 || rows < 1 || global.nx % columns != 0 || global.ny % rows != 0)
    throw std::invalid_argument("decomposed_result: " + std::to_string(global.nx) + " x " +
                                std::to_string(global.ny) + " points do not split into " +
                                std::to_string(columns) + " x " + std::to_string(rows) + " parts");
  // Every part has the same sizes, g; its x-neighbours say which of its x-halos the stages read.
  const grid_shape g{global.nx / columns, global.ny / rows, global.nz, global.pad};
  auto shape_of = [&](const part& p) {
    grid_shape shape = g;
    shape.west_neighbour = p.place.west() >= 0;
    shape.east_neighbour = p.place.east() >= 0;
    return shape;
  };
  std::vector<part> parts;
  for (int p = 0; p < columns * rows; ++p)
    parts.push_back({process_grid::of(columns, rows, p), fields(g)});
  for (part& p : parts) {
    const std::vector<double> input =
        initial_field(g, seed, static_cast<long long>(p.place.y) * g.ny, p.place.x * g.nx);
    std::copy(input.begin(), input.end(), p.f.in.begin());
  }
  auto in = [](fields& f) -> std::vector<double>& { return f.in; };
  auto lap = [](fields& f) -> std::vector<double>& { return f.lap; };
  auto flx = [](fields& f) -> std::vector<double>& { return f.flx; };
  auto fly = [](fields& f) -> std::vector<double>& { return f.fly; };
  exchange(g, parts, in, halos.out);
  for (int t = 0; t < iterations; ++t) {
    for (auto& p : parts) laplacian_rows(shape_of(p), p.f.in, p.f.lap, 0, g.ny);
    exchange(g, parts, lap, halos.lap);
    for (auto& p : parts) flux_rows(shape_of(p), p.f.lap, p.f.flx, p.f.fly, 0, g.ny);
    exchange(g, parts, flx, halos.flx);
    exchange(g, parts, fly, halos.fly);
    for (auto& p : parts) diffusion_rows(shape_of(p), p.f.in, p.f.flx, p.f.fly, p.f.out, 0, g.ny);
    for (auto& p : parts) std::swap(p.f.in, p.f.out);
    exchange(g, parts, in, halos.out);
  }
  std::vector<double> joined(global.field_size(), 0.0);
  for (const part& p : parts)
    for (int j = 0; j < g.ny; ++j)
      for (int k = 0; k < g.nz; ++k)
        std::copy_n(p.f.in.begin() + static_cast<std::ptrdiff_t>(g.index(0, j, k)), g.nx,
                    joined.begin() + static_cast<std::ptrdiff_t>(
                                         global.index(p.place.x * g.nx, p.place.y * g.ny + j, k)));
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
