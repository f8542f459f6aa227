// The examples (examples/) on one GPU: each exits 0 and says its result is right.
#include <string>

#include "gpu_harness.h"

namespace {

void run_example(const char* path, const std::string& success) {
  gpu_test::require_gpu();
  if (std::string(path).empty()) {
    throw dcuda_test::skip{"the examples are not built (-DDCUDA_BUILD_EXAMPLES=OFF)"};
  }
  const auto child = gpu_test::run_child_program(path);
  if (child.exit_code != 0 || !gpu_test::contains(child.output, success)) {
    throw dcuda_test::failure("exit " + std::to_string(child.exit_code) + ", output:\n" +
                              child.output);
  }
}

}  // namespace

DCUDA_TEST(ring_example_passes_every_number_on) {
  run_example(DCUDA_EXAMPLE_RING, ": correct");
}

DCUDA_TEST(halo_exchange_example_fills_every_halo) {
  run_example(DCUDA_EXAMPLE_HALO_EXCHANGE, ": correct");
}

DCUDA_TEST(overlap_example_matches_the_cpu) {
  run_example(DCUDA_EXAMPLE_OVERLAP, "matches the CPU");
}

DCUDA_TEST(reduction_example_matches_the_cpu_sum) {
  run_example(DCUDA_EXAMPLE_REDUCTION, "matches the CPU sum");
}

// Alone: every rank sends to itself.
DCUDA_TEST(multi_gpu_example_runs_as_one_process) {
  run_example(DCUDA_EXAMPLE_MULTI_GPU, ": correct");
}

DCUDA_TEST(work_queue_example_sums_every_chunk_once) {
  run_example(DCUDA_EXAMPLE_WORK_QUEUE, ": correct");
}
