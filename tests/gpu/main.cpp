// GPU test program: `gpu_tests` runs every case, `--case NAME` one, `--child NAME` runs a scenario
// that other cases start in a child process and judge by its exit code and output, and
// `--gpu-status` says whether the GPU tests will run here or skip, and why.
#include <cstring>

#include "gpu_harness.h"

int main(int argc, char** argv) {
  // As dcuda_host_init does, but before this program's first CUDA call (CUDA reads it then): the
  // stream-ordered waits' cases need more hardware queues than CUDA's 8 (docs/settings.md).
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  if (argc == 2 && std::strcmp(argv[1], "--gpu-status") == 0) {
    try {
      gpu_test::require_gpu();
      cudaDeviceProp properties{};
      cudaGetDeviceProperties(&properties, 0);
      std::printf("GPU tests: running on %s\n", properties.name);
    } catch (const dcuda_test::skip& reason) {
      std::printf("GPU tests: each will report itself skipped: %s\n", reason.reason.c_str());
    }
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) {
    for (const auto& scenario : gpu_test::child_registry()) {
      if (std::strcmp(scenario.name, argv[2]) == 0) {
        scenario.body();
        return 0;
      }
    }
    std::fprintf(stderr, "no child scenario named %s\n", argv[2]);
    return 2;
  }
  return dcuda_test::run_tests(argc, argv);
}
