#include "runtime/host_context.h"

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "runtime/channel_consumer.h"
#include "runtime/cpu_timers.h"
#include "runtime/error_text.h"
#include "runtime/polling_thread.h"
#include "runtime/watchdog.h"

namespace dcuda::runtime {
namespace {

int select_device(int device) {
  int count = 0;
  DCUDA_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device >= count) {
    throw error("dcuda_host_init: GPU " + std::to_string(device) +
                " (DCUDA_DEVICE / --dcuda-device) does not exist; " + std::to_string(count) +
                " GPU(s) found");
  }
  DCUDA_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

// Prints log lines as "[rank R] text" (or "[rank R thread T] text") on standard output.
bool print_log_lines(channel_consumer& logs) {
  bool any = false;
  while (auto line = logs.try_take()) {
    any = true;
    std::string out = "[rank " + std::to_string(line->rank);
    if (line->aux >= 0) out += " thread " + std::to_string(line->aux);
    out += "] " + line->text + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (any) {
    std::fflush(stdout);
  } else {
    logs.publish_position();
  }
  return any;
}

// Serves timers and pings. Pings are answered by storing the operation number the rank waits for.
// Messages carry world ranks; the per-rank host arrays are indexed by rank on this GPU.
bool serve_commands(channel_consumer& commands, cpu_timers& timers, std::uint32_t* acks,
                    int rank_start) {
  auto message = commands.try_take();
  if (!message) {
    commands.publish_position();
    return false;
  }
  const auto now = cpu_timers::clock::now();
  const int device_rank = message->rank - rank_start;
  switch (message->type) {
    case protocol::message_type::timer_start:
      timers.start(device_rank, now);
      break;
    case protocol::message_type::timer_stop:
      timers.stop(device_rank, now);
      break;
    case protocol::message_type::ping:
      protocol::system_atomic<std::uint32_t>(acks[device_rank])
          .store(static_cast<std::uint32_t>(message->aux), cuda::memory_order_release);
      break;
    default:
      break;
  }
  return true;
}

struct run_outcome {
  cudaError_t kernel_status = cudaSuccess;
  std::optional<std::string> hang_report;  // set when the watchdog found a standstill
};

// The main thread's part of a run: wait for the kernel, asking the watchdog every millisecond.
// Warnings are printed and the run goes on; after a standstill the ranks get a moment to stop
// (waiting ranks trap on the abort flag), then the run is given up whatever they do.
run_outcome watch_until_finished(cudaEvent_t finished, watchdog& dog, const device_state& state) {
  run_outcome outcome;
  std::optional<watchdog::clock::time_point> gave_up_at;
  while ((outcome.kernel_status = cudaEventQuery(finished)) == cudaErrorNotReady) {
    const auto now = watchdog::clock::now();
    if (!outcome.hang_report) {
      watchdog::verdict verdict = dog.check(now);
      if (verdict.what == watchdog::verdict::warning) {
        std::fprintf(stderr, "dcuda: warning: %s", verdict.report.c_str());
        std::fflush(stderr);
      } else if (verdict.what == watchdog::verdict::standstill) {
        outcome.hang_report = std::move(verdict.report);
        state.request_abort();
        gave_up_at = now;
      }
    } else if (now - *gave_up_at > std::chrono::seconds(5)) {
      break;  // some rank is not in a dcuda wait and never reads the abort flag
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return outcome;
}

}  // namespace
}  // namespace dcuda::runtime

using namespace dcuda::runtime;
namespace protocol = dcuda::protocol;

dcuda_host_context::dcuda_host_context(settings settings, dcuda_kernel_t kernel,
                                       int threads_per_rank)
    : settings_(settings),
      kernel_(kernel),
      threads_per_rank_(threads_per_rank),
      launch_(plan_launch(kernel, select_device(settings.device), threads_per_rank,
                          settings.max_ranks_per_device)),
      state_(launch_.ranks, settings.report_wait_after_s) {
  rank_info_.rank_count = launch_.ranks;
  rank_info_.rank_responsible = launch_.ranks;
  rank_info_.rank_start = 0;
  rank_info_.device_count = 1;
  rank_info_.device_index = 0;
  rank_info_.node_count = 1;
  rank_info_.node_index = 0;
  rank_info_.process_count = 1;
  rank_info_.process_index = 0;
}

double dcuda_host_context::run(void* user_data, std::size_t size) {
  if (size > 0 && user_data == nullptr) {
    throw error("dcuda_host_run: gpu_data is NULL but gpu_size is " + std::to_string(size));
  }
  if (user_data_.size() < size) user_data_ = device_array<char>(size);
  void* device_data = size > 0 ? user_data_.get() : nullptr;
  if (size > 0) {
    DCUDA_CUDA_CHECK(
        cudaMemcpyAsync(device_data, user_data, size, cudaMemcpyHostToDevice, stream_.get()));
  }
  state_.prepare_run(device_data, stream_.get());
  DCUDA_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));

  channel_consumer commands(state_.command_channel());
  channel_consumer logs(state_.log_channel());
  cpu_timers timers(launch_.ranks);
  watchdog dog(state_.wait_records(), launch_.ranks, rank_info_.rank_start,
               settings_.wait_timeout_s);
  cuda_event started;
  cuda_event finished;
  run_outcome outcome;
  {
    std::uint32_t* acks = state_.host_acks();
    polling_thread command_proxy(
        [&] { return serve_commands(commands, timers, acks, rank_info_.rank_start); },
        std::chrono::microseconds(0));
    polling_thread log_printer([&] { return print_log_lines(logs); },
                               std::chrono::microseconds(50));

    dcuda_context* context = state_.device_context();
    void* arguments[] = {&context};
    DCUDA_CUDA_CHECK(cudaEventRecord(started.get(), stream_.get()));
    DCUDA_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel_),
                                                 dim3(launch_.ranks), dim3(threads_per_rank_),
                                                 arguments, 0, stream_.get()));
    DCUDA_CUDA_CHECK(cudaEventRecord(finished.get(), stream_.get()));

    outcome = watch_until_finished(finished.get(), dog, state_);
  }  // threads drain what the device sent, then stop

  const protocol::error_report& report = state_.error();
  if (protocol::system_atomic<std::uint32_t>(const_cast<std::uint32_t&>(report.written))
          .load(cuda::memory_order_acquire) != 0u) {
    throw error("dcuda_host_run: " + describe_error(report) + "; the run was stopped");
  }
  if (outcome.hang_report) throw error(*outcome.hang_report + "the run was stopped");
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
  timings_ = timers.results();
  return elapsed_ms;
}
