// The stencil case study's CPU side: the input generator, the formulas at hand-computed points,
// the reference's stability, and the distributed algorithm's halo exchanges (the GPU versions
// exchange the same planes and columns: messages_of, decomposed_result).
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
    const auto split = decomposed_result(global, 1, parts, 5, 4);
    DCUDA_CHECK_EQ(max_difference(global, split, expected), 0.0);
  }
}

// Parts in x as well as in y (one point wide, too): the columns exchanged into the x-halos make
// the result the reference's, bit for bit.
DCUDA_TEST(stencil_parts_in_x_and_y_with_the_halo_exchanges_equal_the_reference) {
  const grid_shape global{8, 6, 3};
  const auto expected = reference_result(global, 9, 4);
  for (int columns : {2, 4, 8})
    for (int rows : {1, 2, 3}) {
      const auto split = decomposed_result(global, columns, rows, 9, 4);
      DCUDA_CHECK_EQ(max_difference(global, split, expected), 0.0);
    }
}

// Each exchange is needed: without any one of its directions the result differs.
DCUDA_TEST(stencil_parts_without_one_exchange_differ_from_the_reference) {
  const grid_shape global{8, 12, 3};
  const auto expected = reference_result(global, 5, 4);
  int cases = 0;
  for (int which = 0; which < 4; ++which)
    for (halo_directions iteration_halos::*field : {&iteration_halos::lap, &iteration_halos::flx,
                                                    &iteration_halos::fly, &iteration_halos::out}) {
      iteration_halos halos;
      halo_directions& d = halos.*field;
      bool* flags[] = {&d.first_row_down, &d.last_row_up, &d.first_column_west,
                       &d.last_column_east};
      if (!*flags[which]) continue;
      *flags[which] = false;
      ++cases;
      DCUDA_CHECK(max_difference(global, decomposed_result(global, 2, 2, 5, 4, halos), expected) >
                  1e-6);
    }
  DCUDA_CHECK_EQ(cases, 8);  // lap: 2, flx: 1, fly: 1, out: 4
}

DCUDA_TEST(stencil_padding_between_planes_changes_no_value) {
  const grid_shape plain{7, 12, 3}, padded{7, 12, 3, 5};
  const auto expected = reference_result(plain, 5, 4);
  const auto padded_split = decomposed_result(padded, 1, 3, 5, 4);
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
  const halo_messages middle = messages_of(g, out_halo(), {1, 3, 0, 1});
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
  DCUDA_CHECK(middle.column_sends.empty() && middle.column_receives.empty());  // one column
  const halo_messages bottom_lap = messages_of(g, lap_halo(), {1, 3, 0, 0});   // nowhere down
  DCUDA_CHECK(bottom_lap.sends.empty());
  DCUDA_CHECK_EQ(bottom_lap.receives.size(), static_cast<std::size_t>(1));
  DCUDA_CHECK_EQ(bottom_lap.receives[0].peer, 1);
  const halo_messages alone = messages_of(g, out_halo(), {1, 1, 0, 0});
  DCUDA_CHECK(alone.empty());
}

// On a 3 x 2 grid of parts, the part at (1, 0) (process 1) has neighbours west (0), east (2) and
// above (4): its columns go both ways in x, and they arrive in the x-halos facing the sender.
DCUDA_TEST(stencil_halo_messages_name_columns_and_neighbours_in_x) {
  const grid_shape g{4, 10, 2};
  const process_grid middle_bottom{3, 2, 1, 0};
  const halo_messages out = messages_of(g, out_halo(), middle_bottom);
  DCUDA_CHECK_EQ(out.sends.size(), static_cast<std::size_t>(1));
  DCUDA_CHECK_EQ(out.sends[0].row, 9);
  DCUDA_CHECK_EQ(out.sends[0].peer, 4);
  DCUDA_CHECK_EQ(out.receives.size(), static_cast<std::size_t>(1));
  DCUDA_CHECK_EQ(out.receives[0].row, 10);
  DCUDA_CHECK_EQ(out.receives[0].peer, 4);
  DCUDA_CHECK_EQ(out.column_sends.size(), static_cast<std::size_t>(2));
  DCUDA_CHECK_EQ(out.column_sends[0].column, 0);
  DCUDA_CHECK_EQ(out.column_sends[0].peer, 0);
  DCUDA_CHECK_EQ(out.column_sends[1].column, 3);
  DCUDA_CHECK_EQ(out.column_sends[1].peer, 2);
  DCUDA_CHECK_EQ(out.column_receives.size(), static_cast<std::size_t>(2));
  DCUDA_CHECK_EQ(out.column_receives[0].column, 4);  // east x-halo, from the east
  DCUDA_CHECK_EQ(out.column_receives[0].peer, 2);
  DCUDA_CHECK_EQ(out.column_receives[1].column, -1);  // west x-halo, from the west
  DCUDA_CHECK_EQ(out.column_receives[1].peer, 0);
  const halo_messages flx = messages_of(g, flx_halo(), {3, 2, 2, 1});  // the east edge
  DCUDA_CHECK(flx.sends.empty() && flx.receives.empty() && flx.column_sends.empty());
  DCUDA_CHECK_EQ(flx.column_receives.size(), static_cast<std::size_t>(1));
  DCUDA_CHECK_EQ(flx.column_receives[0].peer, 4);
  DCUDA_CHECK_EQ(column_start(g, -1), g.west_halo_start() + g.halo_index(0, 0));
  DCUDA_CHECK_EQ(column_start(g, 4), g.east_halo_start() + g.halo_index(0, 0));
  DCUDA_CHECK_EQ(column_start(g, 3), g.index(3, 0, 0));
}

// The process grids --px 0 picks: as square as the count allows, more rows than columns.
DCUDA_TEST(stencil_squarest_process_grids) {
  DCUDA_CHECK_EQ(squarest_columns(1), 1);
  DCUDA_CHECK_EQ(squarest_columns(2), 1);
  DCUDA_CHECK_EQ(squarest_columns(4), 2);
  DCUDA_CHECK_EQ(squarest_columns(6), 2);
  DCUDA_CHECK_EQ(squarest_columns(8), 2);
  DCUDA_CHECK_EQ(squarest_columns(9), 3);
  DCUDA_CHECK_EQ(squarest_columns(7), 1);
}

// A point at a part's x-edge reads its x-halo, found from its position alone.
DCUDA_TEST(stencil_x_edge_points_read_their_x_halos) {
  grid_shape g{4, 3, 2};
  g.west_neighbour = g.east_neighbour = true;
  std::vector<double> field(g.allocation_size(), 0.0);
  for (int j = 0; j < g.ny; ++j)
    for (int k = 0; k < g.nz; ++k) {
      field[g.west_halo_start() + g.halo_index(j, k)] = 100 + 10 * j + k;
      field[g.east_halo_start() + g.halo_index(j, k)] = 200 + 10 * j + k;
      for (int i = 0; i < g.nx; ++i) field[g.index(i, j, k)] = i;
    }
  for (int j = 0; j < g.ny; ++j)
    for (int k = 0; k < g.nz; ++k) {
      DCUDA_CHECK_EQ(west(field.data(), g, g.index(0, j, k), 0), 100.0 + 10 * j + k);
      DCUDA_CHECK_EQ(east(field.data(), g, g.index(3, j, k), 3), 200.0 + 10 * j + k);
      DCUDA_CHECK_EQ(west(field.data(), g, g.index(2, j, k), 2), 1.0);
    }
  g.west_neighbour = false;  // the grid's edge: 0, the halo unread
  DCUDA_CHECK_EQ(west(field.data(), g, g.index(0, 1, 1), 0), 0.0);
}
