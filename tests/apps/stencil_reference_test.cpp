// The stencil case study's CPU side: the input generator, the formulas at hand-computed points,
// the reference's stability, and the distributed algorithm's halo exchanges (the GPU versions
// exchange the same planes: messages_of, decomposed_result).
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "point_walk.h"
#include "stencil_app.h"
#include "stencil_reference.h"
#include "test_main.h"

using namespace stencil;

DCUDA_TEST(stencil_input_is_deterministic_in_range_and_seed_dependent) {
  std::set<double> seen;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      const double v = initial_value(42, i, j, 3);
      DCUDA_CHECK(v >= 0.0 && v < 1.0);
      DCUDA_CHECK_EQ(v, initial_value(42, i, j, 3));
      DCUDA_CHECK(v != initial_value(43, i, j, 3));
      seen.insert(v);
    }
  DCUDA_CHECK_EQ(seen.size(), static_cast<std::size_t>(64));  // no two points alike
}

DCUDA_TEST(stencil_slab_input_is_the_global_input_rows) {
  const grid_shape global{5, 6, 2}, slab{5, 3, 2};
  const auto whole = initial_field(global, 7, 0);
  const auto upper = initial_field(slab, 7, 3);
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 2; ++k)
      for (int i = 0; i < 5; ++i)
        DCUDA_CHECK_EQ(upper[slab.index(i, j, k)], whole[global.index(i, j + 3, k)]);
  DCUDA_CHECK_EQ(upper[slab.index(0, -1, 0)], 0.0);  // halo planes start zero
  DCUDA_CHECK_EQ(upper[slab.index(4, 3, 1)], 0.0);
}

DCUDA_TEST(stencil_formulas_match_hand_computed_values) {
  // 3 x 3 x 1 grid, in(i, j) = 1 + i + 10 j; outside it 0.
  const grid_shape g{3, 3, 1};
  std::vector<double> in(g.field_size(), 0.0);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) in[g.index(i, j, 0)] = 1 + i + 10 * j;
  // centre: 4*12 - 11 - 13 - 2 - 22 = 0; corner (0,0): 4*1 - 0 - 2 - 0 - 11 = -9
  DCUDA_CHECK_EQ(laplacian(in.data(), g, g.index(1, 1, 0), 1), 0.0);
  DCUDA_CHECK_EQ(laplacian(in.data(), g, g.index(0, 0, 0), 0), -9.0);
  std::vector<double> lap(g.field_size(), 0.0), flx(g.field_size(), 0.0), fly(g.field_size(), 0.0);
  laplacian_rows(g, in, lap, 0, 3);
  // lap row 0: (-9, -8, 5); row 1: (2, 0, 14); row 2: (43, 30, 55)... checked through the fluxes:
  DCUDA_CHECK_EQ(lap[g.index(2, 0, 0)], 4.0 * 3 - 2 - 0 - 0 - 13);  // -3
  DCUDA_CHECK_EQ(x_flux(lap.data(), g, g.index(0, 0, 0), 0),
                 lap[g.index(1, 0, 0)] - lap[g.index(0, 0, 0)]);
  DCUDA_CHECK_EQ(x_flux(lap.data(), g, g.index(2, 0, 0), 2), 0.0 - lap[g.index(2, 0, 0)]);
  DCUDA_CHECK_EQ(y_flux(lap.data(), g, g.index(1, 2, 0)), 0.0 - lap[g.index(1, 2, 0)]);
  flux_rows(g, lap, flx, fly, 0, 3);
  const double expected =
      in[g.index(1, 1, 0)] + coefficient * (flx[g.index(1, 1, 0)] - flx[g.index(0, 1, 0)] +
                                            fly[g.index(1, 1, 0)] - fly[g.index(1, 0, 0)]);
  DCUDA_CHECK_EQ(diffused(in.data(), flx.data(), fly.data(), g, g.index(1, 1, 0), 1), expected);
}

DCUDA_TEST(stencil_reference_damps_the_field) {
  const grid_shape g{16, 16, 2};
  double previous = 1e300;
  for (int t = 0; t <= 20; t += 5) {
    const auto field = reference_result(g, 1, t);
    double energy = 0;
    for (double v : field) energy += v * v;
    DCUDA_CHECK(energy < previous);
    previous = energy;
  }
}

DCUDA_TEST(stencil_slabs_with_the_halo_exchanges_equal_the_reference) {
  const grid_shape global{7, 12, 3};
  const auto expected = reference_result(global, 5, 4);
  for (int parts : {1, 2, 3, 4, 6, 12}) {
    const auto split = decomposed_result(global, parts, 5, 4);
    DCUDA_CHECK_EQ(max_difference(global, split, expected), 0.0);
  }
}

DCUDA_TEST(stencil_slabs_without_one_exchange_differ_from_the_reference) {
  const grid_shape global{7, 12, 3};
  const auto expected = reference_result(global, 5, 4);
  const halo_directions none{false, false};
  DCUDA_CHECK(max_difference(global,
                             decomposed_result(global, 2, 5, 4, {none, fly_halo(), out_halo()}),
                             expected) > 1e-6);
  DCUDA_CHECK(max_difference(global,
                             decomposed_result(global, 2, 5, 4, {lap_halo(), none, out_halo()}),
                             expected) > 1e-6);
  DCUDA_CHECK(
      max_difference(global,
                     decomposed_result(global, 2, 5, 4, {lap_halo(), fly_halo(), {true, false}}),
                     expected) > 1e-6);
}

DCUDA_TEST(stencil_padding_between_planes_changes_no_value) {
  const grid_shape plain{7, 12, 3}, padded{7, 12, 3, 5};
  const auto expected = reference_result(plain, 5, 4);
  const auto padded_split = decomposed_result(padded, 3, 5, 4);
  DCUDA_CHECK_EQ(padded.plane_size(), plain.plane_size() + 5);
  double largest = 0;
  for (int j = 0; j < plain.ny; ++j)
    for (int k = 0; k < plain.nz; ++k)
      for (int i = 0; i < plain.nx; ++i)
        largest = std::max(largest, std::abs(padded_split[padded.index(i, j, k)] -
                                             expected[plain.index(i, j, k)]));
  DCUDA_CHECK_EQ(largest, 0.0);
}

// The threads of a rank or a kernel together visit every point of a block once, whatever their
// number: fewer than a row, more than a level, more than the block; a multiple of a row (5, 10,
// 45, 1000 here) takes the step without the x carry, as for_rows does (stencil_kernels.cuh).
// A walk of pairs (width 2, on a grid with even nx and pad) visits the first point of each pair,
// and the pair's two points are then every point once.
DCUDA_TEST(stencil_point_walks_visit_every_point_of_a_block_once) {
  int column_walks = 0;
  for (const auto& [g, width] :
       {std::pair{grid_shape{5, 9, 4, 3}, 1u}, std::pair{grid_shape{6, 9, 4, 2}, 2u}})
    for (point_block block :
         {point_block{0, 9, 0, 4}, point_block{2, 7, 1, 3}, point_block{8, 9, 3, 4}}) {
      for (unsigned threads : {1u, 3u, 5u, 7u, 10u, 26u, 45u, 64u, 1000u}) {
        std::vector<int> visits(g.field_size(), 0);
        for (unsigned thread = 0; thread < threads; ++thread)
          for (point_walk p(g, block, thread, threads, width); !p.done();
               p.keeps_column() ? p.next_in_column() : p.next()) {
            column_walks += p.keeps_column() ? 1 : 0;
            DCUDA_CHECK(p.at() + width <= g.field_size());
            DCUDA_CHECK_EQ(static_cast<std::size_t>(p.i()), p.at() % g.plane_size() % g.nx);
            DCUDA_CHECK_EQ(p.i() % static_cast<int>(width), 0);
            for (unsigned point = 0; point < width; ++point) ++visits[p.at() + point];
          }
        for (int j = 0; j < g.ny; ++j)
          for (int k = 0; k < g.nz; ++k)
            for (int i = 0; i < g.nx; ++i) {
              const bool inside =
                  j >= block.j_begin && j < block.j_end && k >= block.k_begin && k < block.k_end;
              DCUDA_CHECK_EQ(visits[g.index(i, j, k)], inside ? 1 : 0);
            }
      }
    }
  DCUDA_CHECK(column_walks > 0);
}

DCUDA_TEST(stencil_halo_messages_name_rows_and_neighbours) {
  const grid_shape g{4, 10, 2};
  const halo_messages middle = messages_of(g, out_halo(), 1, 3);
  DCUDA_CHECK_EQ(middle.sends.size(), static_cast<std::size_t>(2));
  DCUDA_CHECK_EQ(middle.sends[0].row, 0);
  DCUDA_CHECK_EQ(middle.sends[0].peer, 0);
  DCUDA_CHECK_EQ(middle.sends[1].row, 9);
  DCUDA_CHECK_EQ(middle.sends[1].peer, 2);
  DCUDA_CHECK_EQ(middle.receives.size(), static_cast<std::size_t>(2));
  DCUDA_CHECK_EQ(middle.receives[0].row, 10);
  DCUDA_CHECK_EQ(middle.receives[0].peer, 2);
  DCUDA_CHECK_EQ(middle.receives[1].row, -1);
  DCUDA_CHECK_EQ(middle.receives[1].peer, 0);
  const halo_messages bottom_lap = messages_of(g, lap_halo(), 0, 3);  // first row down: nowhere
  DCUDA_CHECK(bottom_lap.sends.empty());
  DCUDA_CHECK_EQ(bottom_lap.receives.size(), static_cast<std::size_t>(1));
  DCUDA_CHECK_EQ(bottom_lap.receives[0].peer, 1);
  const halo_messages alone = messages_of(g, out_halo(), 0, 1);
  DCUDA_CHECK(alone.sends.empty() && alone.receives.empty());
}
