// The examples (examples/) on one GPU: each exits 0 and says its result is right.
#include <unistd.h>

#include <string>

#include "gpu_harness.h"

namespace {

// Where the example is: where CMake built it or, in a build tree moved since (copied to another
// machine with its tests), the same place under the tree this program runs from, which holds it
// at <tree>/tests/gpu/gpu_tests.
std::string example_path(const std::string& built) {
  const std::string root = DCUDA_TEST_BUILD_ROOT;
  if (access(built.c_str(), X_OK) == 0 || built.rfind(root + "/", 0) != 0) return built;
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return built;
  const std::string program(self, static_cast<std::size_t>(length));
  const std::string place = "/tests/gpu/gpu_tests";
  if (program.size() <= place.size() ||
      program.compare(program.size() - place.size(), place.size(), place) != 0) {
    return built;
  }
  return program.substr(0, program.size() - place.size()) + built.substr(root.size());
}

void run_example(const char* built, const std::string& success) {
  gpu_test::require_gpu();
  if (std::string(built).empty()) {
    throw dcuda_test::skip{"the examples are not built (-DDCUDA_BUILD_EXAMPLES=OFF)"};
  }
  const std::string path = example_path(built);
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
