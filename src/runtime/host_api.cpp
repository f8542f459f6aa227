// The C-style API of thesis listing 3.3. Each call runs inside `guarded`, the one place where a
// failure of the runtime becomes a message on standard error and a nonzero exit (the API has no
// error codes, and after a kernel fault the GPU context cannot be used again).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "dcuda/host.h"
#include "runtime/host_context.h"

namespace {

template <typename Body>
auto guarded(const char* call, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& failure) {
    std::fflush(stdout);
    std::string text = failure.what();
    if (text.rfind(call, 0) != 0) text = std::string(call) + ": " + text;
    std::fprintf(stderr, "dcuda: error: %s\n", text.c_str());
    std::fflush(stderr);
    // _Exit: a hung or faulted kernel may still hold the GPU; running atexit handlers (CUDA's
    // among them) could block on it.
    std::_Exit(EXIT_FAILURE);
  }
}

dcuda_host_context& checked(const char* call, dcuda_host_context_handle ctx) {
  if (ctx == nullptr) {
    throw dcuda::runtime::error(std::string(call) +
                                ": the context handle is NULL (was dcuda_host_init called?)");
  }
  return *ctx;
}

}  // namespace

void dcuda_host_init(int argc, char* argv[], dcuda_host_context_handle* ctx, dcuda_kernel_t kernel,
                     int threads_per_rank) {
  guarded("dcuda_host_init", [&] {
    if (ctx == nullptr) throw dcuda::runtime::error("dcuda_host_init: ctx is NULL");
    if (kernel == nullptr) throw dcuda::runtime::error("dcuda_host_init: kernel is NULL");
    std::vector<std::string> arguments;
    for (int i = 1; i < argc && argv != nullptr; ++i) {
      if (argv[i] != nullptr) arguments.emplace_back(argv[i]);
    }
    auto settings = dcuda::runtime::read_settings(arguments, dcuda::runtime::dcuda_environment());
    // The handle is the C API's owning pointer; dcuda_host_finish takes ownership back.
    *ctx = std::make_unique<dcuda_host_context>(settings, kernel, threads_per_rank).release();
  });
}

void dcuda_host_get_rank_info(dcuda_host_context_handle ctx, dcuda_rank_info* rank_info) {
  guarded("dcuda_host_get_rank_info", [&] {
    const auto& context = checked("dcuda_host_get_rank_info", ctx);
    if (rank_info == nullptr) throw dcuda::runtime::error("rank_info is NULL");
    *rank_info = context.rank_info();
  });
}

double dcuda_host_run(dcuda_host_context_handle ctx, void* gpu_data, size_t gpu_size) {
  return guarded("dcuda_host_run",
                 [&] { return checked("dcuda_host_run", ctx).run(gpu_data, gpu_size); });
}

void dcuda_host_share_memory(dcuda_host_context_handle ctx, void* allocation) {
  guarded("dcuda_host_share_memory",
          [&] { checked("dcuda_host_share_memory", ctx).share_memory(allocation); });
}

std::vector<double> dcuda_host_get_timings(dcuda_host_context_handle ctx) {
  return guarded("dcuda_host_get_timings",
                 [&] { return checked("dcuda_host_get_timings", ctx).timings(); });
}

void dcuda_host_finish(dcuda_host_context_handle ctx) {
  guarded("dcuda_host_finish",
          [&] { std::unique_ptr<dcuda_host_context> owner(&checked("dcuda_host_finish", ctx)); });
}

void dcuda_get_version(int* major, int* minor, int* patch) {
  if (major != nullptr) *major = DCUDA_VERSION_MAJOR;
  if (minor != nullptr) *minor = DCUDA_VERSION_MINOR;
  if (patch != nullptr) *patch = DCUDA_VERSION_PATCH;
}
