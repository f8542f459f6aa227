// The line under the host-initiated benchmarks' tables (bench/common/initiator_crossover.h):
// every range of sizes where the host's calls were faster, however often the curves cross.
#include <string>
#include <vector>

#include "common/initiator_crossover.h"
#include "test_main.h"

using dcuda_bench::faster_initiator_sizes;

DCUDA_TEST(the_faster_initiator_is_named_for_every_range_of_sizes) {
  const std::vector<std::size_t> sizes{4, 8, 16, 32, 64};
  DCUDA_CHECK_EQ(faster_initiator_sizes(sizes, {5, 5, 5, 5, 5}, {1, 2, 3, 4, 5}),
                 std::string("device-initiated was as fast or faster at every size"));
  DCUDA_CHECK_EQ(faster_initiator_sizes(sizes, {5, 5, 3, 3, 9}, {1, 2, 4, 4, 8}),
                 std::string("host-initiated was faster at 16 .. 32 bytes; device-initiated as "
                             "fast or faster at every other size"));
  DCUDA_CHECK_EQ(faster_initiator_sizes(sizes, {1, 5, 3, 5, 1}, {2, 2, 4, 4, 2}),
                 std::string("host-initiated was faster at 4, 16, 64 bytes; device-initiated as "
                             "fast or faster at every other size"));
  DCUDA_CHECK_EQ(faster_initiator_sizes(sizes, {1, 1, 1, 1, 1}, {2, 2, 2, 2, 2}),
                 std::string("host-initiated was faster at 4 .. 64 bytes; device-initiated as "
                             "fast or faster at every other size"));
}
