// The thesis's reduction example (apps/reduction) agrees with the CPU.
#include <string>

#include "gpu_harness.h"

DCUDA_TEST(reduction_example_matches_the_cpu_sum) {
  gpu_test::require_gpu();
  if (std::string(DCUDA_REDUCTION_EXAMPLE).empty()) {
    throw dcuda_test::skip{"the example is not built (-DDCUDA_BUILD_APPS=OFF)"};
  }
  const auto child = gpu_test::run_child_program(DCUDA_REDUCTION_EXAMPLE);
  if (child.exit_code != 0 || !gpu_test::contains(child.output, "matches the CPU sum")) {
    throw dcuda_test::failure("exit " + std::to_string(child.exit_code) + ", output:\n" +
                              child.output);
  }
}
