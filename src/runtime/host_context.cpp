#include "runtime/host_context.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "bootstrap/cpu_placement.h"
#include "runtime/channel_consumer.h"
#include "runtime/command_server.h"
#include "runtime/cpu_timers.h"
#include "runtime/driver_api.h"
#include "runtime/error_text.h"
#include "runtime/log_printing.h"
#include "runtime/network_proxy.h"
#include "runtime/polling_thread.h"
#include "runtime/signal_watch.h"
#include "runtime/watchdog.h"
#include "runtime/watchdog_loop.h"

using namespace dcuda::runtime;
namespace protocol = dcuda::protocol;

dcuda_host_context::dcuda_host_context(settings settings, dcuda_kernel_t kernel,
                                       int threads_per_rank)
    : settings_(settings),
      kernel_(kernel),
      threads_per_rank_(threads_per_rank),
      placement_(place_process(settings.device, settings.verbose, settings.emulate_nodes)),
      paths_(decide_paths(placement_, settings.force_network)),
      counts_(
          count_ranks(placement_, paths_, kernel, threads_per_rank, settings.max_ranks_per_device)),
      rings_(paths_, counts_.ranks, settings.host_world_barrier),
      buffers_(counts_.shape, rings_.wiring(), route_ranks(paths_, counts_, rings_),
               settings.report_wait_after_s) {
  const world_shape& shape = buffers_.shape();
  const dcuda::bootstrap::process_layout layout = placement_.layout();
  if (shape.process_count > 1) {  // allocated now: cudaHostAlloc waits while a kernel fills the GPU
    outgoing_staging_.emplace(staging_bytes);
    incoming_staging_.emplace(staging_bytes);
    received_layouts_.emplace(received_layout_bytes);
  }
  returned_data_ = mapped_array<char>(returned_data_bytes);
  if (!settings.allow_shared_gpus && !paths_.shared_gpu_warning.empty()) {
    std::fputs(paths_.shared_gpu_warning.c_str(), stderr);
    std::fflush(stderr);
  }
  if (placement_.job && settings.verbose) {
    const std::string barrier =
        layout.process_count < 2
            ? std::string()
            : std::string("dcuda: barriers of DCUDA_COMM_WORLD meet ") +
                  (buffers_.meets_on_gpus() ? "on the GPUs (every process is a peer)\n"
                                            : "through the host proxies\n");
    const std::string paths = describe_paths(layout, paths_, counts_.ranks) + barrier +
                              dcuda::bootstrap::describe_cpu_placement(
                                  layout.process_index, dcuda::bootstrap::allowed_cpus());
    std::fwrite(paths.data(), 1, paths.size(), stderr);
    std::fflush(stderr);
  }
  rank_info_.rank_count = shape.world_size;
  rank_info_.rank_responsible = shape.device_ranks;
  rank_info_.rank_start = shape.rank_start;
  rank_info_.device_count = layout.local_count;
  rank_info_.device_index = layout.local_index;
  rank_info_.node_count = layout.node_count;
  rank_info_.node_index = layout.node_index;
  rank_info_.process_count = layout.process_count;
  rank_info_.process_index = layout.process_index;
  heaps_.emplace(paths_, counts_.ranks, shape.device_ranks, settings.heap_bytes, shared_memory_);
  buffers_.use_heaps(heaps_->segments(), heaps_->allocators(), heaps_->order(),
                     heaps_->window_row());
}

void dcuda_host_context::share_memory(void* allocation) {
  if (allocation != nullptr) {
    allocation_range range;
    try {
      range = allocation_containing(allocation);
    } catch (const dcuda::runtime::error& e) {
      std::ostringstream text;
      text << "pointer " << allocation << " is not inside a cudaMalloc allocation of this process ("
           << e.what() << ")";
      throw dcuda::runtime::error(DCUDA_ERROR_INVALID_ARGUMENT, text.str());
    }
    const std::optional<std::uint64_t> id = allocation_id(range.base);
    if (!id)
      throw error(DCUDA_ERROR_CUDA, "the CUDA driver does not know the allocation it just found");
    shared_allocations_.push_back({range.base, range.size, *id});
  }
  if (placement_.layout().process_count > 1) shared_memory_.share(paths_, allocation);
}

stream_operations& dcuda_host_context::collective_stream_operations() {
  wait_for_run();
  if (!stream_operations_) {
    stream_operations_.emplace(paths_, counts_.ranks, placement_.device, settings_.wait_timeout_s,
                               settings_.stream_copy_engine_from, settings_.network_chunk_bytes);
  }
  return *stream_operations_;
}

stream_operations& dcuda_host_context::started_stream_operations(const char* call) {
  // No wait for the run in flight: the thread serving it touches none of the stream operations'
  // state, and it may be waiting for what this call queues.
  if (!stream_operations_) {
    throw error(DCUDA_ERROR_INVALID_STATE,
                std::string(call) +
                    ": no host window exists yet (dcuda_host_win_create, collective, comes first)");
  }
  return *stream_operations_;
}

void dcuda_host_context::check_shared_allocations() const {
  for (const shared_allocation& shared : shared_allocations_) {
    if (allocation_id(shared.base) == shared.id) continue;
    std::ostringstream text;
    text << "the allocation at " << shared.base << " (" << shared.size
         << " bytes) that dcuda_host_share_memory shared has been freed; shared memory must stay "
            "allocated until dcuda_host_finish (the other processes of the node keep it mapped "
            "and would write into whatever is there now)";
    throw error(DCUDA_ERROR_INVALID_STATE, text.str());
  }
}

namespace {

// Runs of every context of this process, in order: where each run's window generations start.
// Process-wide, so that a handle kept from a context that dcuda_host_finish ended is refused by
// the next context's runs too. Processes need not agree on it: a window of DCUDA_COMM_WORLD takes
// the highest generation any of them offers.
std::uint32_t next_run_index() {
  static std::atomic<std::uint32_t> runs{0};
  return runs.fetch_add(1, std::memory_order_relaxed);
}

// An asynchronous run's copy back: from the pinned staging into the user's data, by a host
// function the stream runs after the copy from the GPU.
struct results_copy {
  void* user_data = nullptr;
  const void* staged = nullptr;
  std::size_t size = 0;
};

void CUDART_CB copy_results_back(void* job) {
  const auto* results = static_cast<const results_copy*>(job);
  std::memcpy(results->user_data, results->staged, results->size);
}

}  // namespace

struct dcuda_host_context::launched_run {
  // The network side of the proxy, created by all processes together; it outlives the report of
  // any failure (its teardown must not come before the message).
  std::optional<network_proxy> network;
  cuda_event started;
  cuda_event finished;
  // After an asynchronous run's results are back in the user's data (its last stream operation).
  cuda_event returned;
  void* device_data = nullptr;
  results_copy results;  // an asynchronous run's, read by the stream's host function
};

void dcuda_host_context::launch_run(launched_run& run, const char* call, void* user_data,
                                    std::size_t size, cudaStream_t stream) {
  if (size > 0 && user_data == nullptr) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                std::string(call) + ": gpu_data is NULL but gpu_size is " + std::to_string(size));
  }
  check_shared_allocations();
  if (user_data_.size() < size) user_data_ = device_array<char>(size);
  void* device_data = size > 0 ? user_data_.get() : nullptr;
  run.device_data = device_data;
  if (size > 0) {
    DCUDA_CUDA_CHECK(
        cudaMemcpyAsync(device_data, user_data, size, cudaMemcpyHostToDevice, stream_.get()));
  }
  if (stream_operations_) {
    buffers_.use_host_windows(
        stream_operations_->rank_counters(), stream_operations_->taken_by_ranks(),
        stream_operations_->ranks_window_view(), stream_operations_->ranks_target_view());
  }
  buffers_.prepare_run(device_data, protocol::first_window_generation(next_run_index()),
                       stream_.get());
  DCUDA_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  if (buffers_.shape().process_count > 1) {
    run.network.emplace(
        paths_, counts_.ranks, shared_memory_, buffers_, *outgoing_staging_, *incoming_staging_,
        *received_layouts_,
        stream_operations_ ? stream_operations_->landing_view() : host_window_landing{},
        settings_.network_trace, settings_.network_chunk_bytes);
  }
  dcuda_context* context = buffers_.device_context();
  void* arguments[] = {&context};
  cudaEvent_t started = run.started.get();
  cudaEvent_t finished = run.finished.get();
  DCUDA_CUDA_CHECK(cudaEventRecord(started, stream));
  // The ranks, then the delivery agent when the network path is in use.
  const int blocks = counts_.launch.ranks + (buffers_.uses_network() ? 1 : 0);
  DCUDA_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel_), dim3(blocks),
                                               dim3(threads_per_rank_), arguments, 0, stream));
  DCUDA_CUDA_CHECK(cudaEventRecord(finished, stream));
}

double dcuda_host_context::run(void* user_data, std::size_t size) {
  wait_for_run();
  // Outside the try block: a failure is reported while the network proxy still exists (its
  // teardown, the engine's and the world collectives', must not come before the message).
  launched_run launched;
  try {
    launch_run(launched, "dcuda_host_run", user_data, size, stream_.get());
    const double elapsed_ms = serve_run(launched, "dcuda_host_run");
    if (size > 0) {
      DCUDA_CUDA_CHECK(cudaMemcpyAsync(user_data, launched.device_data, size,
                                       cudaMemcpyDeviceToHost, stream_.get()));
      DCUDA_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    }
    return elapsed_ms;
  } catch (const std::exception& failure) {
    report_and_exit("dcuda_host_run", failure);
  }
}

void dcuda_host_context::run_async(void* user_data, std::size_t size, cudaStream_t stream) {
  wait_for_run();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  DCUDA_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                "dcuda_host_run_async: the stream is being captured into a CUDA graph; a run is "
                "served by the host while its kernel runs and cannot be replayed from a graph");
  }
  if (returned_data_.size() < size) returned_data_ = mapped_array<char>(size);
  // Owned by the serving thread until the stream has run the run's last operation; created
  // before the try block so that a failure is reported while its network proxy exists.
  auto launched = std::make_unique<launched_run>();
  try {
    launch_run(*launched, "dcuda_host_run_async", user_data, size, stream);
    if (size > 0) {
      DCUDA_CUDA_CHECK(cudaMemcpyAsync(returned_data_.host(), launched->device_data, size,
                                       cudaMemcpyDeviceToHost, stream));
      launched->results = {user_data, returned_data_.host(), size};
      DCUDA_CUDA_CHECK(cudaLaunchHostFunc(stream, copy_results_back, &launched->results));
    }
    DCUDA_CUDA_CHECK(cudaEventRecord(launched->returned.get(), stream));
  } catch (const std::exception& failure) {
    report_and_exit("dcuda_host_run_async", failure);
  }
  unwaited_run_ = true;
  run_server_ = std::thread([this, run = std::move(launched)] {
    try {
      // The CUDA device is per thread: the events and the proxy's copies belong to this GPU.
      DCUDA_CUDA_CHECK(cudaSetDevice(placement_.device));
      served_run_ms_ = serve_run(*run, "dcuda_host_run_async");
      DCUDA_CUDA_CHECK(cudaEventSynchronize(run->returned.get()));
    } catch (const std::exception& failure) {
      report_and_exit("dcuda_host_run_async", code_of(failure),
                      named_by_call(failure.what(), "dcuda_host_run_async"));
    }
  });
}

void dcuda_host_context::wait_for_run() {
  if (run_server_.joinable()) run_server_.join();
}

std::optional<double> dcuda_host_context::wait_for_async_run() {
  wait_for_run();
  if (!unwaited_run_) return std::nullopt;
  unwaited_run_ = false;
  return served_run_ms_;
}

double dcuda_host_context::serve_run(launched_run& run, const char* call) {
  command_server server(buffers_, run.network ? &*run.network : nullptr);
  channel_consumer logs(buffers_.log_channel(), {.rank_start = buffers_.shape().rank_start,
                                                 .rank_count = buffers_.shape().device_ranks,
                                                 .world_size = buffers_.shape().world_size});
  std::function<std::string()> other_processes;
  if (run.network) other_processes = [&] { return run.network->waiting_for(); };
  // With the delivery agent the kernel ends only once every rank has called dcuda_gpu_finish.
  watchdog dog(buffers_.wait_records(), counts_.launch.ranks, rank_info_.rank_start,
               settings_.wait_timeout_s, other_processes, buffers_.uses_network());
  run_outcome outcome;
  {
    const signal_watch signals;  // SIGTERM, SIGINT: the watch loop stops the run
    polling_thread command_proxy(
        [&] { return server.poll(); }, std::chrono::microseconds(0),
        // The CUDA device is per thread: the proxy's copies and events belong to this GPU.
        [this, &server] { server.start_on_device(placement_.device); });
    polling_thread log_printer([&] { return print_log_lines(logs); },
                               std::chrono::microseconds(50));
    outcome = watch_until_finished(run.started.get(), run.finished.get(), dog, buffers_, call);
  }  // threads drain what the device sent, then stop
  const std::string& proxy_failure = server.failure();

  // First: the ranks were stopped because of it, whatever they reported on their way out.
  if (outcome.signal) throw interruption_error(*outcome.signal, rank_info_.process_index);
  if (const std::uint32_t compiled = buffers_.kernel_layout_stamp(); compiled != 0u) {
    throw error(DCUDA_ERROR_DEVICE_CALL,
                describe_layout_mismatch(compiled, protocol::context_layout_stamp));
  }
  const protocol::error_report& report = buffers_.error();
  if (protocol::system_atomic<std::uint32_t>(const_cast<std::uint32_t&>(report.written))
          .load(cuda::memory_order_acquire) != 0u) {
    // The process behind each of this GPU's rings, in ring order (peer_rings.h).
    std::vector<int> ring_senders;
    for (int p = 0; p < paths_.process_count(); ++p) {
      if (paths_.reach_as_peers(paths_.process_index, p)) ring_senders.push_back(p);
    }
    throw error(code_of(report), "dcuda_host_run: " + describe_error(report, ring_senders) +
                                     "; the run was stopped");
  }
  // After the device's own report and the watchdog's: a rank's misuse, or the abort after a
  // standstill, stops the kernel, and the proxy's next CUDA call then fails only because of it.
  if (outcome.hang_report) {
    throw error(DCUDA_ERROR_TIMEOUT,
                *outcome.hang_report + "the run was stopped" +
                    (proxy_failure.empty() ? "" : " (then the host proxy: " + proxy_failure + ")"));
  }
  if (!proxy_failure.empty()) {
    throw error(server.failure_code(), "dcuda_host_run: host proxy of process " +
                                           std::to_string(rank_info_.process_index) + ": " +
                                           proxy_failure + "; the run was stopped");
  }
  if (outcome.kernel_status != cudaSuccess) {
    throw_cuda_error(outcome.kernel_status, "dcuda kernel (cudaLaunchCooperativeKernel)");
  }
  float elapsed_ms = 0;
  DCUDA_CUDA_CHECK(cudaEventElapsedTime(&elapsed_ms, run.started.get(), run.finished.get()));
  timings_ = server.timings();
  return elapsed_ms;
}
