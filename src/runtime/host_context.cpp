#include "runtime/host_context.h"

#include <atomic>
#include <chrono>
#include <cstring>
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

}  // namespace

double dcuda_host_context::run(void* user_data, std::size_t size) {
  if (size > 0 && user_data == nullptr) {
    throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                "dcuda_host_run: gpu_data is NULL but gpu_size is " + std::to_string(size));
  }
  check_shared_allocations();
  if (user_data_.size() < size) user_data_ = device_array<char>(size);
  void* device_data = size > 0 ? user_data_.get() : nullptr;
  if (size > 0) {
    DCUDA_CUDA_CHECK(
        cudaMemcpyAsync(device_data, user_data, size, cudaMemcpyHostToDevice, stream_.get()));
  }
  buffers_.prepare_run(device_data, protocol::first_window_generation(next_run_index()),
                       stream_.get());
  DCUDA_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));

  // Other processes: the network side of the proxy (created by all processes together). Declared
  // before the try block, so that a failure is reported while it still exists: its teardown
  // (the engine's, world collectives' stream) must not come before the message.
  std::optional<network_proxy> network;
  try {
    if (buffers_.shape().process_count > 1) {
      network.emplace(paths_, counts_.ranks, shared_memory_, buffers_, *outgoing_staging_,
                      *incoming_staging_, *received_layouts_, settings_.network_trace,
                      settings_.network_chunk_bytes);
    }
    return finish_run(network, user_data, device_data, size);
  } catch (const std::exception& failure) {
    report_and_exit("dcuda_host_run", failure);
  }
}

double dcuda_host_context::finish_run(std::optional<network_proxy>& network, void* user_data,
                                      void* device_data, std::size_t size) {
  command_server server(buffers_, network ? &*network : nullptr);
  channel_consumer logs(buffers_.log_channel(), {.rank_start = buffers_.shape().rank_start,
                                                 .rank_count = buffers_.shape().device_ranks,
                                                 .world_size = buffers_.shape().world_size});
  std::function<std::string()> other_processes;
  if (network) other_processes = [&] { return network->waiting_for(); };
  // With the delivery agent the kernel ends only once every rank has called dcuda_gpu_finish.
  watchdog dog(buffers_.wait_records(), counts_.launch.ranks, rank_info_.rank_start,
               settings_.wait_timeout_s, other_processes, buffers_.uses_network());
  cuda_event started;
  cuda_event finished;
  run_outcome outcome;
  {
    const signal_watch signals;  // SIGTERM, SIGINT: the watch loop stops the run
    polling_thread command_proxy(
        [&] { return server.poll(); }, std::chrono::microseconds(0),
        // The CUDA device is per thread: the proxy's copies and events belong to this GPU.
        [this, &server] { server.start_on_device(placement_.device); });
    polling_thread log_printer([&] { return print_log_lines(logs); },
                               std::chrono::microseconds(50));

    dcuda_context* context = buffers_.device_context();
    void* arguments[] = {&context};
    DCUDA_CUDA_CHECK(cudaEventRecord(started.get(), stream_.get()));
    // The ranks, then the delivery agent when the network path is in use.
    const int blocks = counts_.launch.ranks + (buffers_.uses_network() ? 1 : 0);
    DCUDA_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel_),
                                                 dim3(blocks), dim3(threads_per_rank_), arguments,
                                                 0, stream_.get()));
    DCUDA_CUDA_CHECK(cudaEventRecord(finished.get(), stream_.get()));

    outcome = watch_until_finished(finished.get(), dog, buffers_);
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
  DCUDA_CUDA_CHECK(cudaEventElapsedTime(&elapsed_ms, started.get(), finished.get()));
  if (size > 0) {
    DCUDA_CUDA_CHECK(
        cudaMemcpyAsync(user_data, device_data, size, cudaMemcpyDeviceToHost, stream_.get()));
    DCUDA_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }
  timings_ = server.timings();
  return elapsed_ms;
}
