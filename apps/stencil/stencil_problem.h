// The stencil case study (thesis 5.5): a simplified horizontal diffusion, three dependent stencils
// on a 3-D grid, applied level by level (each z-level is an independent 2-D problem):
//
//   1. lap = 4 in(i,j) - in(i-1,j) - in(i+1,j) - in(i,j-1) - in(i,j+1)
//   2. flx = lap(i+1,j) - lap(i,j),  fly = lap(i,j+1) - lap(i,j)
//   3. out = in(i,j) + c (flx(i,j) - flx(i-1,j) + fly(i,j) - fly(i,j-1))
//
// out = in - c A^2 in with A the (positive) 5-point operator of stage 1: a damping fourth-order
// diffusion, stable for c < 1/32. Outside the global grid every field is 0.
//
// Layout of every field of one GPU (or of the whole grid, for the CPU reference): y-planes, one
// halo plane below (j = -1) and one above (j = ny); inside a plane z-levels of nx points:
// index(i, j, k) = (j + 1) * (nx * nz + pad) + k * nx + i (pad 0 unless asked for). A y-plane is
// therefore contiguous (nx * nz values): the message of a halo exchange in y. After the planes
// come the field's two x-halos (west, then east): one value per row and level, the column just
// beyond the GPU's part, at index (j + 1) * nz + k of the halo. A column of the field is not
// contiguous (one value every nx): the message of a halo exchange in x.
//
// The GPUs form a grid of px x py parts (stencil_app.h, process_grid): each owns nx x ny points of
// every level. px = 1 (the default) splits the domain in y only, into slabs of rows; px > 1 also
// in x, and the parts exchange columns as well as planes. Each dcuda rank owns a run of its GPU's
// rows.
//
// These formulas are the only definition of the arithmetic: the CPU reference and every GPU
// version call them, so a result check compares like with like (up to contraction into FMA).
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device.h"

namespace stencil {

// Diffusion coefficient: 1/64, half the stability limit.
constexpr double coefficient = 1.0 / 64.0;

struct grid_shape {
  int nx = 0;   // points in x
  int ny = 0;   // rows (y) owned, halo planes not counted
  int nz = 0;   // levels (z)
  int pad = 0;  // unused values after each plane: a layout experiment (--pad), 0 by default
  // Whether the part has a neighbour in x on that side: its x-halo there holds the neighbour's
  // column; without one it is the grid's edge (0), and the halo is never read.
  bool west_neighbour = false;
  bool east_neighbour = false;

  // Values from one plane to the next (nx * nz, plus the padding).
  APP_HD std::size_t plane_size() const { return static_cast<std::size_t>(nx) * nz + pad; }
  // Values of a field with its two halo planes.
  APP_HD std::size_t field_size() const { return plane_size() * (ny + 2); }
  APP_HD std::size_t index(int i, int j, int k) const {
    return static_cast<std::size_t>(j + 1) * plane_size() + static_cast<std::size_t>(k) * nx + i;
  }
  // First value of plane j (j = -1 and j = ny are the halo planes).
  APP_HD std::size_t plane_start(int j) const {
    return static_cast<std::size_t>(j + 1) * plane_size();
  }
  // Values of one x-halo: a value per row (halo planes included, unused) and level.
  APP_HD std::size_t column_halo_size() const { return static_cast<std::size_t>(ny + 2) * nz; }
  APP_HD std::size_t west_halo_start() const { return field_size(); }
  APP_HD std::size_t east_halo_start() const { return field_size() + column_halo_size(); }
  // Values of a field with its halo planes and its two x-halos: what a GPU allocates per field.
  APP_HD std::size_t allocation_size() const { return field_size() + 2 * column_halo_size(); }
  // Position of row j, level k in an x-halo, from its start.
  APP_HD std::size_t halo_index(int j, int k) const {
    return static_cast<std::size_t>(j + 1) * nz + static_cast<std::size_t>(k);
  }
  // The same from the position `at` of a point of row j, level k in the field: without padding
  // (a part with x-neighbours has none, setup_from) at / nx is (j + 1) * nz + k. 32 bits: a
  // GPU's part holds fewer than 2^31 values (setup_from).
  APP_HD std::size_t halo_index_of(std::size_t at) const {
    return static_cast<unsigned>(at) / static_cast<unsigned>(nx);
  }
};

// The GPUs' parts as a grid of `columns` x `rows` (px x py): process p at x = p % columns,
// y = p / columns, owning global columns x * nx.. and rows y * ny.. of every level.
struct process_grid {
  int columns = 1, rows = 1;
  int x = 0, y = 0;

  // The place of process `process`.
  APP_HD static process_grid of(int columns, int rows, int process) {
    return {columns, rows, process % columns, process / columns};
  }
  APP_HD int process() const { return y * columns + x; }
  // The neighbouring parts' processes, -1 at the grid's edge.
  APP_HD int west() const { return x > 0 ? process() - 1 : -1; }
  APP_HD int east() const { return x + 1 < columns ? process() + 1 : -1; }
  APP_HD int below() const { return y > 0 ? process() - columns : -1; }
  APP_HD int above() const { return y + 1 < rows ? process() + columns : -1; }
};

// The formulas take a point by its position in the field, `at` = g.index(i, j, k), and its x
// coordinate i: the neighbours in x are at +-1, or beyond 0..nx-1 in the x-halo of that side (0
// at the grid's edge); those in y at +-one plane (the halo planes hold the neighbouring GPU's
// rows, or 0 at the grid's edge).
APP_HD inline double west(const double* field, const grid_shape& g, std::size_t at, int i) {
  if (i > 0) return field[at - 1];
  return g.west_neighbour ? field[g.west_halo_start() + g.halo_index_of(at)] : 0.0;
}
APP_HD inline double east(const double* field, const grid_shape& g, std::size_t at, int i) {
  if (i + 1 < g.nx) return field[at + 1];
  return g.east_neighbour ? field[g.east_halo_start() + g.halo_index_of(at)] : 0.0;
}

// Each formula also from its operands, in the same order: the GPU loops that load two points at
// once (stencil_kernels.cuh) take the neighbours in x from the pair, and must compute the same
// bits.
APP_HD inline double laplacian_of(double centre, double west, double east, double south,
                                  double north) {
  return 4.0 * centre - west - east - south - north;
}
APP_HD inline double laplacian(const double* in, const grid_shape& g, std::size_t at, int i) {
  const std::size_t plane = g.plane_size();
  return laplacian_of(in[at], west(in, g, at, i), east(in, g, at, i), in[at - plane],
                      in[at + plane]);
}

// A flux is the difference to the next value in x (x_flux) or y (y_flux).
APP_HD inline double flux_of(double centre, double next) {
  return next - centre;
}
APP_HD inline double x_flux(const double* lap, const grid_shape& g, std::size_t at, int i) {
  return flux_of(lap[at], east(lap, g, at, i));
}

APP_HD inline double y_flux(const double* lap, const grid_shape& g, std::size_t at) {
  return flux_of(lap[at], lap[at + g.plane_size()]);
}

APP_HD inline double diffused_of(double in, double flx, double flx_west, double fly,
                                 double fly_south) {
  return in + coefficient * (flx - flx_west + fly - fly_south);
}
APP_HD inline double diffused(const double* in, const double* flx, const double* fly,
                              const grid_shape& g, std::size_t at, int i) {
  return diffused_of(in[at], flx[at], west(flx, g, at, i), fly[at], fly[at - g.plane_size()]);
}

// The input: a value in [0, 1) drawn from (seed, global point), so that every process makes its
// own part of the grid without a global generator and every decomposition gets the same field.
APP_HD inline double initial_value(std::uint64_t seed, int i, long long global_j, int k) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) ^
                    (static_cast<std::uint64_t>(global_j) * 0xC2B2AE3D27D4EB4Full) ^
                    (static_cast<std::uint64_t>(k) * 0x165667B19E3779F9ull);
  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0);  // 53 bits -> [0, 1)
}

// Which boundary rows and columns each stage's output must send (what the next stage reads
// across a part's edge). In y: stage 2 reads lap(j+1), so lap's first row goes down; stage 3
// reads fly(j-1), so fly's last row goes up; stage 1 of the next iteration reads in(j-1) and
// in(j+1), so out's first row goes down and its last row up. In x likewise: stage 2 reads
// lap(i+1), so lap's first column goes west; stage 3 reads flx(i-1), so flx's last column goes
// east; stage 1 reads in(i-1) and in(i+1), so out's first column goes west and its last east.
struct halo_directions {
  bool first_row_down;
  bool last_row_up;
  bool first_column_west;
  bool last_column_east;
};
// (Functions rather than constants: device code may not take a host constant's address.)
APP_HD constexpr halo_directions lap_halo() {
  return {true, false, true, false};
}
APP_HD constexpr halo_directions flx_halo() {
  return {false, false, false, true};
}
APP_HD constexpr halo_directions fly_halo() {
  return {false, true, false, false};
}
APP_HD constexpr halo_directions out_halo() {
  return {true, true, true, true};
}

}  // namespace stencil
