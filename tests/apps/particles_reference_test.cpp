// The particles case study's CPU side: the input generator, the force and the step at
// hand-computed points, the reference's conservation (count, ids, momentum), the distributed
// algorithm's exchanges (the GPU versions send the same segments: messages_of,
// decomposed_result), the comparison by id, and the errors (overflow, too large a step).
#include <algorithm>
#include <cmath>
#include <utility>
#include <set>
#include <stdexcept>
#include <string>

#include "particles_app.h"
#include "particles_reference.h"
#include "test_main.h"

using namespace particles;

namespace {

// A small box with a few particles per segment, and the capacity the programs would give it.
const box small_box{12, 16};
constexpr std::int64_t small_count = 400;  // 2.1 per unit area, 25 per segment
constexpr int small_capacity = 75;

bool same(const std::vector<particle>& a, const std::vector<particle>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].id != b[i].id || a[i].x != b[i].x || a[i].y != b[i].y || a[i].vx != b[i].vx ||
        a[i].vy != b[i].vy)
      return false;
  return true;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

DCUDA_TEST(particles_input_is_deterministic_in_the_box_and_seed_dependent) {
  const box b{10, 20};
  std::set<double> xs;
  for (std::int64_t id = 0; id < 64; ++id) {
    const particle p = initial_particle(42, id, b);
    DCUDA_CHECK(p.x >= 0.0 && p.x < 10.0);
    DCUDA_CHECK(p.y >= 0.0 && p.y < 20.0);
    DCUDA_CHECK(std::fabs(p.vx) <= initial_speed && std::fabs(p.vy) <= initial_speed);
    DCUDA_CHECK_EQ(p.id, id);
    DCUDA_CHECK_EQ(p.x, initial_particle(42, id, b).x);
    DCUDA_CHECK(p.x != initial_particle(43, id, b).x);
    xs.insert(p.x);
  }
  DCUDA_CHECK_EQ(xs.size(), static_cast<std::size_t>(64));  // no two alike
  // Uniform: each half of the box gets about half of many particles.
  const auto all = initial_particles(b, 20000, 7);
  int lower = 0;
  for (const particle& p : all) lower += p.y < 10.0;
  DCUDA_CHECK(lower > 9700 && lower < 10300);
}

DCUDA_TEST(particles_segments_split_the_input_in_id_order) {
  const auto all = initial_particles(small_box, small_count, 3);
  const segment_lists whole = into_segments(all, small_box, 0, small_box.segments);
  const segment_lists upper = into_segments(all, small_box, 8, 8);
  std::size_t total = 0;
  for (int s = 0; s < small_box.segments; ++s) {
    const auto& list = whole[static_cast<std::size_t>(s)];
    total += list.size();
    for (std::size_t i = 0; i < list.size(); ++i) {
      DCUDA_CHECK_EQ(segment_of(list[i].y, small_box), s);
      if (i > 0) DCUDA_CHECK(list[i - 1].id < list[i].id);
    }
    if (s >= 8) DCUDA_CHECK(same(upper[static_cast<std::size_t>(s - 8)], list));
  }
  DCUDA_CHECK_EQ(total, static_cast<std::size_t>(small_count));
}

DCUDA_TEST(particles_force_matches_hand_computed_values) {
  double fx = 0, fy = 0;
  // r = 0.5 along x: k r (1 - r^2) = 10 * 0.5 * 0.75 = 3.75, pushing i away from j (to +x).
  add_force(1.5, 2.0, 1.0, 2.0, fx, fy);
  DCUDA_CHECK_EQ(fx, 3.75);
  DCUDA_CHECK_EQ(fy, 0.0);
  // r = 0.5 along (-0.3, -0.4): magnitude 3.75, direction (-0.6, -0.8); adds to what is there.
  add_force(1.0, 1.0, 1.3, 1.4, fx, fy);
  DCUDA_CHECK(std::fabs(fx - (3.75 - 2.25)) < 1e-14);
  DCUDA_CHECK(std::fabs(fy - (-3.0)) < 1e-14);
  // Antisymmetric, bit for bit.
  double ax = 0, ay = 0, bx = 0, by = 0;
  add_force(0.1, 0.2, 0.7, 0.5, ax, ay);
  add_force(0.7, 0.5, 0.1, 0.2, bx, by);
  DCUDA_CHECK_EQ(ax, -bx);
  DCUDA_CHECK_EQ(ay, -by);
  // Nothing at or beyond the cutoff, nothing from a particle on itself.
  double zx = 0, zy = 0;
  add_force(0.0, 0.0, 1.0, 0.0, zx, zy);
  add_force(0.0, 0.0, 0.8, 0.8, zx, zy);
  add_force(3.0, 3.0, 3.0, 3.0, zx, zy);
  DCUDA_CHECK_EQ(zx, 0.0);
  DCUDA_CHECK_EQ(zy, 0.0);
}

DCUDA_TEST(particles_step_caps_speed_and_reflects_at_the_walls) {
  const box b{4, 8};
  // Force 10 along y for one step: vy 1 -> 1.2, y 3 -> 3.024.
  particle p = advanced({2.0, 3.0, 0.0, 1.0, 7}, 0.0, 10.0, b);
  DCUDA_CHECK_EQ(p.id, 7);
  DCUDA_CHECK(std::fabs(p.vy - 1.2) < 1e-15 && std::fabs(p.y - 3.024) < 1e-15);
  // Speed capped at max_speed, direction kept.
  p = advanced({2.0, 3.0, 30.0, 40.0, 1}, 0.0, 0.0, b);
  DCUDA_CHECK(std::fabs(p.vx - 6.0) < 1e-14 && std::fabs(p.vy - 8.0) < 1e-14);
  // Walls: x below 0 and y above the height come back in, their velocities turned.
  p = advanced({0.05, 7.95, -5.0, 5.0, 2}, 0.0, 0.0, b);
  DCUDA_CHECK(std::fabs(p.x - 0.05) < 1e-15 && p.vx == 5.0);
  DCUDA_CHECK(std::fabs(p.y - 7.95) < 1e-15 && p.vy == -5.0);
  DCUDA_CHECK_EQ(segment_of(0.0, b), 0);
  DCUDA_CHECK_EQ(segment_of(3.99, b), 3);
  DCUDA_CHECK_EQ(segment_of(8.0, b), 7);  // the top wall belongs to the last segment
  DCUDA_CHECK(direction_of(3, 3) == direction::stay);
  DCUDA_CHECK(direction_of(3, 2) == direction::down);
  DCUDA_CHECK(direction_of(3, 4) == direction::up);
  DCUDA_CHECK(direction_of(3, 5) == direction::too_far);
}

DCUDA_TEST(particles_reference_conserves_count_and_ids_and_moves_particles) {
  const auto start = reference_result(small_box, small_count, 5, 0);
  const auto end = reference_result(small_box, small_count, 5, 30);
  const comparison compared = compare_by_id(start, end);
  DCUDA_CHECK(compared.problem.empty());  // every id once, none lost, none added
  DCUDA_CHECK(compared.max_deviation > 0.1);
  // Some particles changed segment: segment order differs from the start's.
  int changed = 0;
  const segment_lists before = into_segments(start, small_box, 0, small_box.segments);
  for (const particle& p : end) {
    bool found = false;
    for (const particle& q : before[static_cast<std::size_t>(segment_of(p.y, small_box))])
      found = found || q.id == p.id;
    changed += !found;
  }
  DCUDA_CHECK(changed > 10);
  for (const particle& p : end)
    DCUDA_CHECK(p.x >= 0 && p.x <= small_box.width && p.y >= 0 && p.y <= small_box.height());
}

DCUDA_TEST(particles_reference_conserves_momentum_away_from_the_walls) {
  // A slow cloud in the middle of a large box: in 10 steps no wall is reached and no speed capped,
  // so only the pair forces act, and they cancel (antisymmetric, up to the order of the sums).
  const box b{64, 64};
  std::vector<particle> cloud;
  for (const particle& p : initial_particles(b, 3000, 11))
    if (p.x > 28 && p.x < 36 && p.y > 28 && p.y < 36) cloud.push_back(p);
  DCUDA_CHECK(cloud.size() > 30);
  auto momentum = [](const std::vector<particle>& all) {
    double px = 0, py = 0;
    for (const particle& p : all) {
      px += p.vx;
      py += p.vy;
    }
    return std::make_pair(px, py);
  };
  const auto end = simulate(b, into_segments(cloud, b, 0, b.segments), 10);
  DCUDA_CHECK_EQ(end.size(), cloud.size());
  double fastest = 0;
  for (const particle& p : end) {
    DCUDA_CHECK(p.x > 20 && p.x < 44 && p.y > 20 && p.y < 44);
    fastest = std::max(fastest, std::hypot(p.vx, p.vy));
  }
  DCUDA_CHECK(fastest < max_speed);
  const auto before = momentum(cloud), after = momentum(end);
  DCUDA_CHECK(std::fabs(after.first - before.first) < 1e-12);
  DCUDA_CHECK(std::fabs(after.second - before.second) < 1e-12);
  // ...while the particles did push each other: velocities changed.
  double largest_change = 0;
  for (const particle& p : end)
    for (const particle& q : cloud)
      if (q.id == p.id)
        largest_change = std::max(largest_change, std::hypot(p.vx - q.vx, p.vy - q.vy));
  DCUDA_CHECK(largest_change > 0.05);
}

DCUDA_TEST(particles_parts_with_both_exchanges_equal_the_reference) {
  const auto expected = reference_result(small_box, small_count, 9, 12);
  for (int parts : {1, 2, 3, 4, 5, 8, 16}) {
    const auto split = decomposed_result(small_box, small_count, parts, 9, 12, small_capacity);
    DCUDA_CHECK(same(split, expected));  // same particles, same order, same bits
    const comparison compared = compare_by_id(expected, split);
    DCUDA_CHECK(compared.problem.empty());
    DCUDA_CHECK_EQ(compared.max_deviation, 0.0);
  }
}

DCUDA_TEST(particles_parts_without_one_exchange_differ_from_the_reference) {
  const auto expected = reference_result(small_box, small_count, 9, 12);
  // Without the migrants, particles that cross a part's edge are lost.
  const comparison no_migrants = compare_by_id(
      expected, decomposed_result(small_box, small_count, 4, 9, 12, small_capacity, {false, true}));
  DCUDA_CHECK(!no_migrants.problem.empty());
  // Without the ghosts, the forces across a part's edge are missing: all there, elsewhere.
  const comparison no_ghosts = compare_by_id(
      expected, decomposed_result(small_box, small_count, 4, 9, 12, small_capacity, {true, false}));
  DCUDA_CHECK(no_ghosts.problem.empty());
  DCUDA_CHECK(no_ghosts.max_deviation > 1e-6);
}

DCUDA_TEST(particles_exchange_messages_name_segments_and_neighbours) {
  const exchange_messages middle = messages_of(exchange_kind::migrants, 10, 1, 3);
  DCUDA_CHECK_EQ(middle.sends.size(), static_cast<std::size_t>(2));
  DCUDA_CHECK_EQ(middle.sends[0].store, static_cast<int>(down_store));
  DCUDA_CHECK_EQ(middle.sends[0].segment, 0);
  DCUDA_CHECK_EQ(middle.sends[0].peer, 0);
  DCUDA_CHECK_EQ(middle.sends[1].store, static_cast<int>(up_store));
  DCUDA_CHECK_EQ(middle.sends[1].segment, 9);
  DCUDA_CHECK_EQ(middle.sends[1].peer, 2);
  DCUDA_CHECK_EQ(middle.receives.size(), static_cast<std::size_t>(2));
  DCUDA_CHECK_EQ(middle.receives[0].store, static_cast<int>(down_store));
  DCUDA_CHECK_EQ(middle.receives[0].segment, 10);
  DCUDA_CHECK_EQ(middle.receives[0].peer, 2);
  DCUDA_CHECK_EQ(middle.receives[1].store, static_cast<int>(up_store));
  DCUDA_CHECK_EQ(middle.receives[1].segment, -1);
  DCUDA_CHECK_EQ(middle.receives[1].peer, 0);
  const exchange_messages top_ghosts = messages_of(exchange_kind::ghosts, 10, 2, 3);
  DCUDA_CHECK_EQ(top_ghosts.sends.size(), static_cast<std::size_t>(1));
  DCUDA_CHECK_EQ(top_ghosts.sends[0].store, static_cast<int>(current_store));
  DCUDA_CHECK_EQ(top_ghosts.sends[0].segment, 0);
  DCUDA_CHECK_EQ(top_ghosts.receives.size(), static_cast<std::size_t>(1));
  DCUDA_CHECK_EQ(top_ghosts.receives[0].segment, -1);
  const exchange_messages alone = messages_of(exchange_kind::ghosts, 10, 0, 1);
  DCUDA_CHECK(alone.sends.empty() && alone.receives.empty());
}

DCUDA_TEST(particles_overflow_is_reported_with_segment_and_count) {
  // A capacity below the fullest segment: found at the start, naming part, segment and count.
  try {
    decomposed_result(small_box, small_count, 2, 9, 1, 20);
    DCUDA_CHECK(false);
  } catch (const std::runtime_error& error) {
    const std::string text = error.what();
    DCUDA_CHECK(contains(text, "part "));
    DCUDA_CHECK(contains(text, "segment "));
    DCUDA_CHECK(contains(text, "more than its capacity 20"));
  }
  // One that holds the input but not what migrates in: found in a migration. The fullest segment
  // at the start sets it; with more iterations some segment grows past it.
  const auto all = initial_particles(small_box, small_count, 9);
  std::size_t fullest = 0;
  for (const auto& list : into_segments(all, small_box, 0, small_box.segments))
    fullest = std::max(fullest, list.size());
  bool overflowed = false;
  try {
    decomposed_result(small_box, small_count, 4, 9, 40, static_cast<int>(fullest));
  } catch (const std::runtime_error& error) {
    overflowed = contains(error.what(), "would hold");
  }
  DCUDA_CHECK(overflowed);
  const std::string text = describe({static_cast<int>(error_kind::overflow), 12, 300}, 256);
  DCUDA_CHECK_EQ(text, std::string("segment 12 would hold 300 particles, more than its capacity "
                                   "256 (raise --capacity)"));
  DCUDA_CHECK(contains(describe({static_cast<int>(error_kind::too_far), 3, 77}, 0), "particle 77"));
}

DCUDA_TEST(particles_comparison_finds_lost_doubled_and_moved_particles) {
  const auto expected = reference_result(small_box, small_count, 2, 0);
  auto lost = expected;
  lost.pop_back();
  DCUDA_CHECK(contains(compare_by_id(expected, lost).problem, "particles where the reference"));
  auto doubled = expected;
  doubled.back() = doubled.front();
  DCUDA_CHECK(contains(compare_by_id(expected, doubled).problem, "more than once"));
  auto moved = expected;
  moved[5].x += 1e-6;
  const comparison compared = compare_by_id(expected, moved);
  DCUDA_CHECK(compared.problem.empty());
  DCUDA_CHECK(std::fabs(compared.max_deviation - 1e-6) < 1e-12);
}

DCUDA_TEST(particles_setup_and_memory_layout) {
  const char* argv[] = {"particles", "--segments", "32", "--particles", "1800"};
  const run_setup setup = setup_from(parse_options(5, const_cast<char**>(argv), "particles"));
  DCUDA_CHECK_EQ(setup.width, 416);
  DCUDA_CHECK_EQ(setup.capacity, 3 * 57);  // three times the mean count, rounded up
  DCUDA_CHECK_EQ(setup.whole(4).segments, 128);
  const store_layout layout{32, 170};
  DCUDA_CHECK_EQ(layout.counts_bytes(), static_cast<std::size_t>(256));
  DCUDA_CHECK_EQ(layout.store_bytes(), 256 + 34 * 170 * sizeof(particle));
  DCUDA_CHECK_EQ(layout.count_offset(down_store, -1), 2 * layout.store_bytes());
  DCUDA_CHECK_EQ(layout.slot_offset(up_store, 32),
                 3 * layout.store_bytes() + 256 + 33 * 170 * sizeof(particle));
  std::vector<unsigned char> memory(layout.bytes());
  const stores st = stores_in(memory.data(), layout);
  DCUDA_CHECK(reinterpret_cast<unsigned char*>(st.up.slot(32)) ==
              memory.data() + layout.slot_offset(up_store, 32));
  DCUDA_CHECK(reinterpret_cast<unsigned char*>(&st.stay.count(5)) ==
              memory.data() + layout.count_offset(stay_store, 5));
}
