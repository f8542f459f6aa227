// Global-pointer arithmetic (dcuda/global_pointer.h), against a reference that walks the
// window's ranks byte position by byte position.
#include <cstdint>
#include <random>

#include "dcuda/global_pointer.h"
#include "test_main.h"

namespace {

// The global pointer `position` bytes from the first byte of rank 0's part, found by walking
// whole parts, as a reader of the definition would.
dcuda_gptr walked(int window, std::int64_t position, std::uint64_t unit_bytes) {
  const auto size = static_cast<std::int64_t>(unit_bytes);
  std::int32_t unit = 0;
  while (position >= size) {
    position -= size;
    ++unit;
  }
  while (position < 0) {
    position += size;
    --unit;
  }
  return dcuda_gptr{unit, window, static_cast<std::uint64_t>(position)};
}

}  // namespace

DCUDA_TEST(global_pointers_cross_ranks_forwards_and_backwards) {
  const dcuda_gptr start{2, 0x105, 10};
  const dcuda_gptr on = dcuda_gptr_advance(start, 100, 64);
  DCUDA_CHECK_EQ(on.unit, 3);
  DCUDA_CHECK_EQ(on.offset, 46u);
  DCUDA_CHECK_EQ(on.window, 0x105);
  // One past a rank's last byte is the next rank's first.
  const dcuda_gptr end = dcuda_gptr_advance(dcuda_gptr{0, 1, 63}, 1, 64);
  DCUDA_CHECK_EQ(end.unit, 1);
  DCUDA_CHECK_EQ(end.offset, 0u);
  // Backwards across two boundaries, and before the first rank (a negative rank, for the call
  // that uses it to refuse).
  const dcuda_gptr back = dcuda_gptr_advance(start, -100, 64);
  DCUDA_CHECK_EQ(back.unit, 0);
  DCUDA_CHECK_EQ(back.offset, 38u);
  const dcuda_gptr before = dcuda_gptr_advance(dcuda_gptr{0, 1, 3}, -4, 64);
  DCUDA_CHECK_EQ(before.unit, -1);
  DCUDA_CHECK_EQ(before.offset, 63u);
  DCUDA_CHECK(dcuda_gptr_equal(dcuda_gptr_advance(start, 0, 64), start));
  DCUDA_CHECK_EQ(dcuda_gptr_distance(start, on, 64), 100);
  DCUDA_CHECK_EQ(dcuda_gptr_distance(on, back, 64), -200);
}

DCUDA_TEST(global_pointer_arithmetic_matches_a_walk_over_the_ranks) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 20000; ++trial) {
    const std::uint64_t unit_bytes = 1 + random() % 5000;
    const int units = 1 + static_cast<int>(random() % 300);
    const std::int64_t extent = static_cast<std::int64_t>(unit_bytes) * units;
    const auto from = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(extent));
    const auto to = static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(extent));
    const dcuda_gptr p = walked(9, from, unit_bytes);
    const dcuda_gptr q = dcuda_gptr_advance(p, to - from, unit_bytes);
    DCUDA_CHECK(dcuda_gptr_equal(q, walked(9, to, unit_bytes)));
    DCUDA_CHECK(q.offset < unit_bytes);
    DCUDA_CHECK_EQ(dcuda_gptr_distance(p, q, unit_bytes), to - from);
  }
}

DCUDA_TEST(global_pointers_of_large_windows_keep_64_bit_offsets) {
  // Parts of 2 GiB - 1 bytes (the largest a window takes) over 100,000 ranks.
  constexpr std::uint64_t part = (1ull << 31) - 1;
  const dcuda_gptr far = dcuda_gptr_advance(dcuda_gptr{0, 3, 0}, 99999ll * part + 5, part);
  DCUDA_CHECK_EQ(far.unit, 99999);
  DCUDA_CHECK_EQ(far.offset, 5u);
  // Beyond what 64-bit positions hold, or a rank past 32 bits: rank -1, never a wrapped one.
  DCUDA_CHECK_EQ(dcuda_gptr_advance(dcuda_gptr{3, 3, 0}, (1ll << 60) + 1, 64).unit, -1);
  DCUDA_CHECK_EQ(dcuda_gptr_advance(dcuda_gptr{3, 3, 0}, -(1ll << 60) - 1, 64).unit, -1);
  DCUDA_CHECK_EQ(dcuda_gptr_advance(dcuda_gptr{0, 3, 0}, 1ll << 40, 1).unit, -1);  // 2^40 ranks
  DCUDA_CHECK_EQ(dcuda_gptr_advance(dcuda_gptr{0, 3, 1ull << 61}, 1, 64).unit, -1);
  DCUDA_CHECK_EQ(dcuda_gptr_advance(dcuda_gptr{0, 3, 0}, 5, 0).unit, -1);
  DCUDA_CHECK_EQ(dcuda_gptr_advance(dcuda_gptr{0, 3, 0}, (1ll << 31) - 1, 1).unit, INT32_MAX);
  DCUDA_CHECK(dcuda_gptr_is_null(DCUDA_GPTR_NULL));
  DCUDA_CHECK(!dcuda_gptr_is_null(far));
}
