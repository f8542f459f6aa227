// Window handles, slot choice and the range checks every put makes.
#include <cstdint>

#include "dcuda/detail/protocol/window_table.h"
#include "test_main.h"

using namespace dcuda::protocol;

DCUDA_TEST(window_handles_round_trip_and_are_never_none) {
  for (int slot = 0; slot < max_windows; ++slot) {
    for (std::uint32_t generation : {1u, 2u, 77u, 0x7fffffu}) {
      const int handle = encode_window(slot, generation);
      DCUDA_CHECK(handle != -1);
      DCUDA_CHECK(window_handle_well_formed(handle));
      DCUDA_CHECK_EQ(window_slot(handle), slot);
      DCUDA_CHECK_EQ(window_generation(handle), generation);
    }
  }
  DCUDA_CHECK(!window_handle_well_formed(-1));  // DCUDA_WIN_NONE
  DCUDA_CHECK(!window_handle_well_formed(3));   // slot 3, generation 0: never issued
  DCUDA_CHECK(!window_handle_well_formed(encode_window(0, 1) | 0xff));  // slot 255
  DCUDA_CHECK_EQ(next_generation(0x7fffffu), 1u);                       // wraps, skipping 0
}

DCUDA_TEST(lowest_free_slot_follows_the_mask) {
  DCUDA_CHECK_EQ(lowest_free_slot(0u), 0);
  DCUDA_CHECK_EQ(lowest_free_slot(0b1011u), 2);
  DCUDA_CHECK_EQ(lowest_free_slot(0x7fffffffu), 31);
  DCUDA_CHECK_EQ(lowest_free_slot(0xffffffffu), -1);
  DCUDA_CHECK_EQ(window_index(2, 5, 10), 25u);
}

DCUDA_TEST(range_checks_reject_outside_and_overflowing_ranges) {
  DCUDA_CHECK(range_inside_window(0, 16, 16));
  DCUDA_CHECK(range_inside_window(16, 0, 16));
  DCUDA_CHECK(!range_inside_window(8, 9, 16));
  DCUDA_CHECK(!range_inside_window(-1, 1, 16));
  DCUDA_CHECK(!range_inside_window(0, -1, 16));
  DCUDA_CHECK(!range_inside_window(17, 0, 16));
  DCUDA_CHECK(
      range_inside_window(INT64_MAX, INT64_MAX, UINT64_MAX - 1));  // ends exactly at the end
  DCUDA_CHECK(!range_inside_window(INT64_MAX, INT64_MAX, UINT64_MAX - 2));  // one byte past
  DCUDA_CHECK(buffer_inside_window(1008, 8, 1000, 16));
  DCUDA_CHECK(!buffer_inside_window(1012, 8, 1000, 16));
  DCUDA_CHECK(!buffer_inside_window(999, 1, 1000, 16));
  DCUDA_CHECK(buffer_inside_window(1000, 0, 1000, 0));
}
