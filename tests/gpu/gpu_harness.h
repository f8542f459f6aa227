// Helpers of the GPU tests: skipping without a GPU, running a dcuda kernel in one call, and
// running a scenario in a child process (error paths end the process, as dcuda promises).
#pragma once

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "dcuda/host.h"
#include "test_main.h"

namespace gpu_test {

// Throws dcuda_test::skip with the reason when this machine has no usable CUDA GPU.
inline void require_gpu() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    throw dcuda_test::skip{std::string("no CUDA GPU found (cudaGetDeviceCount: ") +
                           cudaGetErrorString(status) + ")"};
  }
  if (count == 0) throw dcuda_test::skip{"no CUDA GPU found (0 devices)"};
}

#define GPU_CHECK(call)                                                                     \
  do {                                                                                      \
    const cudaError_t status_ = (call);                                                     \
    if (status_ != cudaSuccess) {                                                           \
      throw ::dcuda_test::failure(std::string(#call) + ": " + cudaGetErrorString(status_)); \
    }                                                                                       \
  } while (0)

// Device memory of `count` values of T, set to `fill_byte` in every byte, owned by a test.
template <typename T>
struct device_buffer {
  explicit device_buffer(std::size_t n, int fill_byte = 0) : count(n) {
    GPU_CHECK(cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(T)));
    GPU_CHECK(cudaMemset(data, fill_byte, n * sizeof(T)));
  }
  ~device_buffer() { cudaFree(data); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  std::vector<T> read() const {
    std::vector<T> host(count);
    GPU_CHECK(cudaMemcpy(host.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T* data = nullptr;
  std::size_t count;
};

struct run_result {
  dcuda_rank_info info;
  double milliseconds;
  std::vector<double> timings;
};

// dcuda_host_init with the test program's name and `arguments`, then dcuda_host_share_memory
// with `shared` when it is set (which may be null; collective, so every process of a
// multi-process test must set it). `info` receives the rank info.
inline dcuda_host_context_handle start_dcuda(dcuda_kernel_t kernel, int threads_per_rank,
                                             const std::vector<std::string>& arguments,
                                             std::optional<void*> shared, dcuda_rank_info& info) {
  std::vector<std::string> storage{"gpu_tests"};
  storage.insert(storage.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  dcuda_host_context_handle context = nullptr;
  dcuda_host_init(static_cast<int>(storage.size()), argv.data(), &context, kernel,
                  threads_per_rank);
  dcuda_host_get_rank_info(context, &info);
  if (shared) dcuda_host_share_memory(context, *shared);
  return context;
}

// dcuda_host_init + run + finish, the way the thesis's listing 3.1 does it (`shared`: see
// start_dcuda).
template <typename UserData>
run_result run_dcuda(dcuda_kernel_t kernel, int threads_per_rank, UserData& data,
                     std::vector<std::string> arguments = {},
                     std::optional<void*> shared = std::nullopt) {
  run_result result{};
  dcuda_host_context_handle context =
      start_dcuda(kernel, threads_per_rank, arguments, shared, result.info);
  result.milliseconds = dcuda_host_run(context, &data, sizeof(data));
  result.timings = dcuda_host_get_timings(context);
  dcuda_host_finish(context);
  return result;
}

// As run_dcuda, with the run started by dcuda_host_run_async on a non-blocking stream of its own.
// `after_call` runs right after the call returns, before the stream is synchronised (it may change
// the host's copy of `data`, which the run's results then overwrite).
template <typename UserData, typename AfterCall>
run_result run_dcuda_async(dcuda_kernel_t kernel, int threads_per_rank, UserData& data,
                           std::vector<std::string> arguments, std::optional<void*> shared,
                           AfterCall after_call) {
  run_result result{};
  dcuda_host_context_handle context =
      start_dcuda(kernel, threads_per_rank, arguments, shared, result.info);
  cudaStream_t stream = nullptr;
  GPU_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  dcuda_host_run_async(context, stream, &data, sizeof(data));
  after_call();
  GPU_CHECK(cudaStreamSynchronize(stream));
  result.milliseconds = dcuda_host_run_wait(context);
  result.timings = dcuda_host_get_timings(context);
  dcuda_host_finish(context);
  GPU_CHECK(cudaStreamDestroy(stream));
  return result;
}

// Rank count dcuda_host_init will choose, asked before init (the kernel writes per-rank results
// into arrays sized by it).
inline int resident_ranks(dcuda_kernel_t kernel, int threads_per_rank, int cap = 1 << 30) {
  cudaDeviceProp properties{};
  GPU_CHECK(cudaGetDeviceProperties(&properties, 0));
  int per_sm = 0;
  GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, reinterpret_cast<const void*>(kernel), threads_per_rank, 0));
  const int ranks = per_sm * properties.multiProcessorCount;
  return ranks < cap ? ranks : cap;
}

struct child_result {
  int exit_code;
  std::string output;  // standard output and standard error, interleaved
};

// Runs a shell command; collects its output and exit code.
inline child_result run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw dcuda_test::failure("popen failed for " + command);
  child_result result{0, {}};
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// Runs this program again as `--child <scenario>` with extra environment settings.
inline child_result run_child(const std::string& scenario, const std::string& environment = "") {
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) {
    throw dcuda_test::failure("readlink(/proc/self/exe) failed");
  }
  return run_command("env " + environment + " '" + self + "' --child " + scenario + " 2>&1");
}

inline child_result run_child_program(const std::string& path) {
  return run_command("'" + path + "' 2>&1");
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Scenarios that run in a child process, looked up by name.
struct child_scenario {
  const char* name;
  void (*body)();
};
inline std::vector<child_scenario>& child_registry() {
  static std::vector<child_scenario> scenarios;
  return scenarios;
}
struct child_registration {
  child_registration(const char* name, void (*body)()) { child_registry().push_back({name, body}); }
};

}  // namespace gpu_test

#define DCUDA_CHILD(name)                                                               \
  static void child_##name();                                                           \
  static ::gpu_test::child_registration child_registration_##name(#name, child_##name); \
  static void child_##name()
