// The distributions of the distributed arrays (dcuda/distribution.h) against a reference that
// deals every element in order: block k to rank k % units, each rank numbering its elements as
// they come.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "dcuda/distribution.h"
#include "test_main.h"

namespace {

using dcuda::distribution;

struct dealt {
  std::vector<int> unit;             // per element
  std::vector<std::uint64_t> local;  // per element
  std::vector<std::uint64_t> count;  // per rank
};

dealt deal(std::uint64_t size, int units, std::uint64_t block) {
  dealt d{std::vector<int>(size), std::vector<std::uint64_t>(size),
          std::vector<std::uint64_t>(static_cast<std::size_t>(units), 0)};
  for (std::uint64_t i = 0; i < size; ++i) {
    const int u = static_cast<int>((i / block) % static_cast<std::uint64_t>(units));
    d.unit[i] = u;
    d.local[i] = d.count[static_cast<std::size_t>(u)]++;
  }
  return d;
}

void check_against_reference(const distribution& layout) {
  const dealt d = deal(layout.size(), layout.units(), layout.block());
  for (std::uint64_t i = 0; i < layout.size(); ++i) {
    const dcuda::element_place at = layout.place_of(i);
    DCUDA_CHECK_EQ(at.unit, d.unit[i]);
    DCUDA_CHECK_EQ(at.local, d.local[i]);
    DCUDA_CHECK_EQ(layout.global_of(at.unit, at.local), i);
    // The run from i: the elements after it on the same rank, one after another.
    std::uint64_t run = 1;
    while (i + run < layout.size() && d.unit[i + run] == d.unit[i] &&
           d.local[i + run] == d.local[i] + run) {
      ++run;
    }
    DCUDA_CHECK_EQ(layout.contiguous_from(i), run);
  }
  std::uint64_t largest = 0;
  for (int u = 0; u < layout.units(); ++u) {
    DCUDA_CHECK_EQ(layout.local_size(u), d.count[static_cast<std::size_t>(u)]);
    largest = std::max(largest, d.count[static_cast<std::size_t>(u)]);
  }
  DCUDA_CHECK_EQ(layout.largest_local_size(), largest);
  DCUDA_CHECK_EQ(layout.local_size(layout.units()), 0u);
}

}  // namespace

DCUDA_TEST(distributions_deal_every_element_as_the_reference_on_random_shapes) {
  std::mt19937_64 random(20261130);
  for (int round = 0; round < 400; ++round) {
    const std::uint64_t size = random() % 300;
    const int units = 1 + static_cast<int>(random() % 9);
    const std::uint64_t block = 1 + random() % 40;
    check_against_reference(distribution::block_cyclic(size, units, block));
    check_against_reference(distribution::blocked(size, units));
    check_against_reference(distribution::cyclic(size, units));
  }
}

DCUDA_TEST(blocked_and_cyclic_are_the_two_ends_of_block_cyclic) {
  const distribution blocked = distribution::blocked(10, 4);  // 3, 3, 3, 1
  DCUDA_CHECK_EQ(blocked.block(), 3u);
  DCUDA_CHECK_EQ(blocked.local_size(3), 1u);
  DCUDA_CHECK_EQ(blocked.place_of(9).unit, 3);
  const distribution cyclic = distribution::cyclic(10, 4);  // 3, 3, 2, 2
  DCUDA_CHECK_EQ(cyclic.place_of(9).unit, 1);
  DCUDA_CHECK_EQ(cyclic.place_of(9).local, 2u);
  DCUDA_CHECK_EQ(cyclic.local_size(2), 2u);
  // Fewer elements than ranks: the last ranks hold nothing.
  const distribution few = distribution::blocked(2, 5);
  DCUDA_CHECK_EQ(few.local_size(1), 1u);
  DCUDA_CHECK_EQ(few.local_size(4), 0u);
  DCUDA_CHECK(distribution::blocked(0, 3).valid());
  DCUDA_CHECK_EQ(distribution::blocked(0, 3).largest_local_size(), 0u);
  DCUDA_CHECK(!distribution::blocked(8, 0).valid());
  DCUDA_CHECK(!distribution::block_cyclic(8, 2, 0).valid());
  DCUDA_CHECK_EQ(distribution::block_cyclic(8, 2, 0).local_size(0), 0u);
  // Large arrays: 2^40 elements over 6 ranks in blocks of 1000.
  const distribution large = distribution::block_cyclic(std::uint64_t{1} << 40, 6, 1000);
  const std::uint64_t i = (std::uint64_t{1} << 40) - 1;
  const dcuda::element_place at = large.place_of(i);
  DCUDA_CHECK_EQ(large.global_of(at.unit, at.local), i);
  std::uint64_t total = 0;
  for (int u = 0; u < 6; ++u) total += large.local_size(u);
  DCUDA_CHECK_EQ(total, std::uint64_t{1} << 40);
  // Blocks and sizes near 2^64: nothing wraps.
  constexpr std::uint64_t most = ~std::uint64_t{0};
  const distribution one_block = distribution::block_cyclic(10, 2, most);
  DCUDA_CHECK_EQ(one_block.local_size(0), 10u);
  DCUDA_CHECK_EQ(one_block.local_size(1), 0u);
  DCUDA_CHECK_EQ(one_block.place_of(5).unit, 0);
  const distribution widest = distribution::blocked(most, 3);
  DCUDA_CHECK_EQ(widest.block(), most / 3);
  DCUDA_CHECK_EQ(widest.local_size(0) + widest.local_size(1) + widest.local_size(2), most);
  const distribution halves = distribution::block_cyclic(most, 2, std::uint64_t{1} << 63);
  DCUDA_CHECK_EQ(halves.local_size(0), std::uint64_t{1} << 63);
  DCUDA_CHECK_EQ(halves.local_size(1), most - (std::uint64_t{1} << 63));
}
