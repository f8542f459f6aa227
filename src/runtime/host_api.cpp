// The C-style API of thesis listing 3.3. Each call runs inside `guarded` (runtime/api_boundary.h):
// the API has no error codes to return, and after a kernel fault the GPU context cannot be used
// again.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "dcuda/host.h"
#include "model/process_model.h"
#include "runtime/api_boundary.h"
#include "runtime/diagnostics.h"
#include "runtime/exit_check.h"
#include "runtime/host_context.h"

namespace {

struct error_handler_slot {
  std::mutex mutex;
  dcuda_error_handler handler = nullptr;
  void* user_data = nullptr;
};

error_handler_slot& error_handler() {
  static error_handler_slot slot;
  return slot;
}

// Every context dcuda_host_init made, in storage that is never given to another one: the handle
// of a context that dcuda_host_finish ended stays recognisable as such (a new context never lands
// at its address), and a handle that is neither is refused without being dereferenced.
class context_registry {
 public:
  // Constructs a context in storage of its own; the handle is its address.
  template <typename... Arguments>
  dcuda_host_context& create(Arguments&&... arguments) {
    std::optional<dcuda_host_context>& storage = contexts_.emplace_back();
    storage.emplace(std::forward<Arguments>(arguments)...);
    slots_.emplace(&*storage, contexts_.size() - 1);
    return *storage;
  }
  enum class state { unknown, live, finished };
  state state_of(const dcuda_host_context* handle) const {
    const auto found = slots_.find(handle);
    if (found == slots_.end()) return state::unknown;
    return contexts_[found->second] ? state::live : state::finished;
  }
  // Ends a live context; its storage stays (empty), reserved for its handle.
  void finish(const dcuda_host_context* handle) { contexts_[slots_.at(handle)].reset(); }

 private:
  std::deque<std::optional<dcuda_host_context>> contexts_;  // a deque never moves its elements
  std::map<const dcuda_host_context*, std::size_t> slots_;
};

// Never destroyed: a context the program did not finish would otherwise be torn down during
// static destruction, after the CUDA runtime's own (as before the registry, it is left to the
// process's end).
context_registry& contexts() {
  static context_registry* const registry = new context_registry;
  return *registry;
}

}  // namespace

namespace dcuda::runtime {

// The text and call stay alive for the handler (the process ends before they would be freed).
void report_and_exit(const char* call, dcuda_error_code code, const std::string& message) {
  // An error inside the handler (which must not call dcuda) ends the process at once.
  static std::atomic<bool> reporting{false};
  std::fflush(stdout);
  const std::string text = message;
  std::fprintf(stderr, "dcuda: error: %s\n", text.c_str());
  std::fflush(stderr);
  if (!reporting.exchange(true)) {
    dcuda_error_handler handler = nullptr;
    void* user_data = nullptr;
    {
      std::lock_guard<std::mutex> lock(error_handler().mutex);
      handler = error_handler().handler;
      user_data = error_handler().user_data;
    }
    if (handler != nullptr) {
      const dcuda_error_info info{code, call, text.c_str(), known_process_index(),
                                  gpu_usable_after(code) ? 1 : 0};
      handler(&info, user_data);
      std::fflush(stdout);
      std::fflush(stderr);
    }
  }
  // _Exit: a hung or faulted kernel may still hold the GPU; running atexit handlers (CUDA's
  // among them) could block on it, and so could MPI_Finalize on a peer that is gone.
  std::_Exit(EXIT_FAILURE);
}

void report_and_exit(const char* call, const std::exception& failure) {
  std::string text = failure.what();
  if (text.rfind(call, 0) != 0) text = std::string(call) + ": " + text;
  report_and_exit(call, code_of(failure), text);
}

}  // namespace dcuda::runtime

namespace {

using dcuda::runtime::report_and_exit;

using dcuda::runtime::guarded;

dcuda_host_context& checked(const char* call, dcuda_host_context_handle ctx) {
  if (ctx == nullptr) {
    throw dcuda::runtime::error(
        DCUDA_ERROR_INVALID_ARGUMENT,
        std::string(call) + ": the context handle is NULL (was dcuda_host_init called?)");
  }
  switch (contexts().state_of(ctx)) {
    case context_registry::state::live:
      return *ctx;
    case context_registry::state::finished:
      throw dcuda::runtime::error(
          DCUDA_ERROR_INVALID_STATE,
          std::string(call) + ": the context was passed to dcuda_host_finish already");
    case context_registry::state::unknown:
      break;
  }
  throw dcuda::runtime::error(
      DCUDA_ERROR_INVALID_ARGUMENT,
      std::string(call) + ": the context handle is not one dcuda_host_init made");
}

}  // namespace

dcuda_host_context& dcuda::runtime::live_context(const char* call, dcuda_host_context_handle ctx) {
  return checked(call, ctx);
}

namespace {

// What dcuda_host_init says about the set-up at DCUDA_DEBUG=INFO.
std::string describe_setup(const dcuda_rank_info& info) {
  int device = -1;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();
    properties.name[0] = '\0';
  }
  return "GPU " + std::to_string(device) + " (" + properties.name + "): world ranks " +
         std::to_string(info.rank_start) + ".." +
         std::to_string(info.rank_start + info.rank_responsible - 1) + " of " +
         std::to_string(info.rank_count) + "; process " + std::to_string(info.process_index) +
         " of " + std::to_string(info.process_count) + ", node " + std::to_string(info.node_index) +
         " of " + std::to_string(info.node_count);
}

}  // namespace

void dcuda_host_set_error_handler(dcuda_error_handler handler, void* user_data) {
  std::lock_guard<std::mutex> lock(error_handler().mutex);
  error_handler().handler = handler;
  error_handler().user_data = handler != nullptr ? user_data : nullptr;
}

const char* dcuda_error_name(dcuda_error_code code) {
  switch (code) {
    case DCUDA_ERROR_INVALID_ARGUMENT:
      return "DCUDA_ERROR_INVALID_ARGUMENT";
    case DCUDA_ERROR_INVALID_STATE:
      return "DCUDA_ERROR_INVALID_STATE";
    case DCUDA_ERROR_SETTING:
      return "DCUDA_ERROR_SETTING";
    case DCUDA_ERROR_DEVICE_CALL:
      return "DCUDA_ERROR_DEVICE_CALL";
    case DCUDA_ERROR_TIMEOUT:
      return "DCUDA_ERROR_TIMEOUT";
    case DCUDA_ERROR_CUDA:
      return "DCUDA_ERROR_CUDA";
    case DCUDA_ERROR_MPI:
      return "DCUDA_ERROR_MPI";
    case DCUDA_ERROR_PEER:
      return "DCUDA_ERROR_PEER";
    case DCUDA_ERROR_INTERNAL:
      return "DCUDA_ERROR_INTERNAL";
    case DCUDA_ERROR_INTERRUPTED:
      return "DCUDA_ERROR_INTERRUPTED";
  }
  return "DCUDA_ERROR_UNKNOWN";
}

namespace {

// DCUDA_NETWORK_CHUNK=model: the process's model (dcuda_model_load's, else DCUDA_MODEL_FILE's)
// chooses; without one the setting is what is wrong.
std::size_t chunk_from_process_model() {
  dcuda::model::parameters model;
  try {
    model = dcuda::model::process_parameters();
  } catch (const dcuda::runtime::error& failure) {
    throw dcuda::runtime::error(DCUDA_ERROR_SETTING,
                                std::string("dcuda_host_init: setting DCUDA_NETWORK_CHUNK "
                                            "(--dcuda-network-chunk) is 'model': ") +
                                    failure.what());
  }
  return dcuda::runtime::network_chunk_from_model(model);
}

}  // namespace

void dcuda_host_init(int argc, char* argv[], dcuda_host_context_handle* ctx, dcuda_kernel_t kernel,
                     int threads_per_rank) {
  using dcuda::runtime::error;
  guarded("dcuda_host_init", [&] {
    // Before the first CUDA call that creates the GPU's context, which reads it: 32 hardware
    // queues instead of 8, so that a stream held by a stream-ordered wait
    // (dcuda_wait_notifications_on_stream) rarely shares its queue with the stream of the
    // operation it waits for. A value the program or its environment set is kept.
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    if (ctx == nullptr) throw error(DCUDA_ERROR_INVALID_ARGUMENT, "dcuda_host_init: ctx is NULL");
    if (kernel == nullptr) {
      throw error(DCUDA_ERROR_INVALID_ARGUMENT, "dcuda_host_init: kernel is NULL");
    }
    // Before the GPU is chosen (plan_launch checks the device's own limit again): no GPU takes a
    // block of fewer than 1 or more than 1024 threads.
    if (threads_per_rank < 1 || threads_per_rank > 1024) {
      throw error(DCUDA_ERROR_INVALID_ARGUMENT, "dcuda_host_init: threads_per_rank " +
                                                    std::to_string(threads_per_rank) +
                                                    " is outside 1..1024");
    }
    std::vector<std::string> arguments;
    for (int i = 1; i < argc && argv != nullptr; ++i) {
      if (argv[i] != nullptr) arguments.emplace_back(argv[i]);
    }
    const auto environment = dcuda::runtime::dcuda_environment();
    static std::once_flag unknown_settings_warned;
    std::call_once(unknown_settings_warned, [&] {
      for (const std::string& warning : dcuda::runtime::unknown_settings(arguments, environment)) {
        dcuda::runtime::warn(warning);
      }
    });
    auto settings = dcuda::runtime::read_settings(arguments, environment);
    dcuda::runtime::set_log_level(settings.debug);
    if (settings.network_chunk_by_model) {
      settings.network_chunk_bytes = chunk_from_process_model();
      dcuda::runtime::info("network chunk " + std::to_string(settings.network_chunk_bytes) +
                           " bytes, chosen by the performance model (DCUDA_NETWORK_CHUNK=model)");
    }
    dcuda::runtime::trace(
        "dcuda_host_init: settings read; joining the job, choosing the GPU, "
        "planning the launch (threads_per_rank " +
        std::to_string(threads_per_rank) + ")");
    // The registry owns the context; dcuda_host_finish ends it.
    dcuda_host_context& context = contexts().create(settings, kernel, threads_per_rank);
    dcuda::runtime::set_process_index(context.rank_info().process_index);
    dcuda::runtime::info(describe_setup(context.rank_info()));
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess) {
      dcuda::runtime::info(dcuda::runtime::describe_launch(kernel, device, threads_per_rank,
                                                           context.rank_info().rank_responsible));
    }
    dcuda::runtime::note_live_context(context.rank_info().process_index,
                                      context.rank_info().process_count);
    *ctx = &context;
    dcuda::runtime::trace("dcuda_host_init: done");
  });
}

void dcuda_host_get_rank_info(dcuda_host_context_handle ctx, dcuda_rank_info* rank_info) {
  guarded("dcuda_host_get_rank_info", [&] {
    const auto& context = checked("dcuda_host_get_rank_info", ctx);
    if (rank_info == nullptr) {
      throw dcuda::runtime::error(DCUDA_ERROR_INVALID_ARGUMENT, "rank_info is NULL");
    }
    *rank_info = context.rank_info();
  });
}

double dcuda_host_run(dcuda_host_context_handle ctx, void* gpu_data, size_t gpu_size) {
  return guarded("dcuda_host_run", [&] {
    auto& context = checked("dcuda_host_run", ctx);
    dcuda::runtime::trace("dcuda_host_run: copying " + std::to_string(gpu_size) +
                          " bytes in, launching the kernel");
    const double elapsed_ms = context.run(gpu_data, gpu_size);
    dcuda::runtime::trace("dcuda_host_run: the kernel ended after " + std::to_string(elapsed_ms) +
                          " ms");
    return elapsed_ms;
  });
}

void dcuda_host_run_async(dcuda_host_context_handle ctx, struct CUstream_st* stream, void* gpu_data,
                          size_t gpu_size) {
  guarded("dcuda_host_run_async", [&] {
    auto& context = checked("dcuda_host_run_async", ctx);
    dcuda::runtime::trace("dcuda_host_run_async: copying " + std::to_string(gpu_size) +
                          " bytes in, launching the kernel on the caller's stream");
    context.run_async(gpu_data, gpu_size, stream);
  });
}

double dcuda_host_run_wait(dcuda_host_context_handle ctx) {
  return guarded("dcuda_host_run_wait", [&] {
    auto& context = checked("dcuda_host_run_wait", ctx);
    const std::optional<double> elapsed_ms = context.wait_for_async_run();
    if (!elapsed_ms) {
      throw dcuda::runtime::error(DCUDA_ERROR_INVALID_STATE,
                                  "dcuda_host_run_wait: no run of this context is in flight "
                                  "(dcuda_host_run_async starts one)");
    }
    dcuda::runtime::trace("dcuda_host_run_wait: the kernel ended after " +
                          std::to_string(*elapsed_ms) + " ms");
    return *elapsed_ms;
  });
}

void dcuda_host_share_memory(dcuda_host_context_handle ctx, void* allocation) {
  guarded("dcuda_host_share_memory", [&] {
    auto& context = checked("dcuda_host_share_memory", ctx);
    context.wait_for_run();
    dcuda::runtime::trace(std::string("dcuda_host_share_memory: ") +
                          (allocation != nullptr ? "mapping the allocation into the node's other "
                                                   "processes"
                                                 : "nothing to share; mapping the others'"));
    context.share_memory(allocation);
  });
}

std::vector<double> dcuda_host_get_timings(dcuda_host_context_handle ctx) {
  return guarded("dcuda_host_get_timings", [&] {
    auto& context = checked("dcuda_host_get_timings", ctx);
    context.wait_for_run();
    return context.timings();
  });
}

void dcuda_host_finish(dcuda_host_context_handle ctx) {
  guarded("dcuda_host_finish", [&] {
    auto& context = checked("dcuda_host_finish", ctx);
    context.wait_for_run();
    const int process_count = context.rank_info().process_count;
    dcuda::runtime::trace("dcuda_host_finish: releasing the GPU's buffers and the mappings");
    contexts().finish(ctx);
    dcuda::runtime::note_finished_context(process_count);
  });
}

void dcuda_get_version(int* major, int* minor, int* patch) {
  if (major != nullptr) *major = DCUDA_VERSION_MAJOR;
  if (minor != nullptr) *minor = DCUDA_VERSION_MINOR;
  if (patch != nullptr) *patch = DCUDA_VERSION_PATCH;
}
