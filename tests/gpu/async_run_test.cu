// dcuda_host_run_async and dcuda_host_run_wait: the run ordered on the caller's stream, the call
// returning before the kernel starts, the results back in the user's data when the stream gets
// there, and the run's errors reported by the context's own thread.
#include <cuda_runtime.h>

#include <chrono>
#include <string>
#include <thread>

#include "dcuda/device.cuh"
#include "dcuda/host.h"
#include "gpu_harness.h"
#include "stream_gate.cuh"
#include "test_main.h"

namespace {

using namespace gpu_test;

struct async_data {
  const int* written_before;  // device memory the kernel queued before the run writes
  int seen_by_rank0;          // what rank 0 read there
  int ranks_done;             // each rank adds 1
  int notifications;          // rank 0 counts the notifications of every other rank
};

__global__ void async_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  async_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  int size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  if (rank != 0) dcuda_notify(gst, 0, DCUDA_COMM_WORLD, 7);
  if (rank == 0) {
    dcuda_wait_notifications(gst, 7, size - 1);
    if (threadIdx.x == 0) {
      data->seen_by_rank0 = *data->written_before;
      data->notifications = size - 1;
    }
  }
  if (threadIdx.x == 0) atomicAdd(&data->ranks_done, 1);
  dcuda_gpu_finish(gst);
}

// Holds the stream until the host opens the gate, then writes 41 where the dcuda kernel reads.
__global__ void gate_kernel(const volatile int* gate, int* written_before) {
  *written_before = wait_at_gate(gate) ? 41 : -1;
}

// A context of `ranks` ranks of 128 threads.
dcuda_host_context_handle start_context(dcuda_kernel_t kernel, int ranks, dcuda_rank_info& info) {
  return start_dcuda(kernel, 128, {"--dcuda-ranks-per-device=" + std::to_string(ranks)},
                     std::nullopt, info);
}

}  // namespace

DCUDA_TEST(async_run_waits_for_the_streams_work_and_returns_before_it) {
  require_gpu();
  // Everything that allocates pinned memory comes before the stream is held.
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(async_kernel, 8, info);
  mapped_gate gate;
  int* written_before = nullptr;
  GPU_CHECK(cudaMalloc(&written_before, sizeof(int)));
  GPU_CHECK(cudaMemset(written_before, 0, sizeof(int)));
  stream_holder held;

  int* decoy = nullptr;  // what the kernel would read had the struct been copied later
  GPU_CHECK(cudaMalloc(&decoy, sizeof(int)));
  const int decoy_value = 99;
  GPU_CHECK(cudaMemcpy(decoy, &decoy_value, sizeof decoy_value, cudaMemcpyHostToDevice));

  gate_kernel<<<1, 1, 0, held.stream>>>(gate.device, written_before);
  GPU_CHECK(cudaGetLastError());
  async_data data{written_before, 0, 0, 0};
  dcuda_host_run_async(context, held.stream, &data, sizeof data);
  // The call returned with the gate still closed: the kernel is queued behind the gate.
  DCUDA_CHECK(cudaStreamQuery(held.stream) == cudaErrorNotReady);
  // The struct was copied in at the call: pointing it elsewhere now changes nothing.
  data.written_before = decoy;

  gate.open();
  GPU_CHECK(cudaStreamSynchronize(held.stream));
  // The stream reached the end of the run: the results are in the user's data, and rank 0 read
  // what the gate kernel wrote before it.
  DCUDA_CHECK_EQ(data.seen_by_rank0, 41);
  DCUDA_CHECK(data.written_before == written_before);
  DCUDA_CHECK_EQ(data.ranks_done, info.rank_count);
  DCUDA_CHECK_EQ(data.notifications, info.rank_count - 1);
  const double elapsed_ms = dcuda_host_run_wait(context);
  DCUDA_CHECK(elapsed_ms > 0);

  // A blocking run on the same context afterwards starts from clean buffers.
  async_data again{written_before, 0, 0, 0};
  dcuda_host_run(context, &again, sizeof again);
  DCUDA_CHECK_EQ(again.seen_by_rank0, 41);
  DCUDA_CHECK_EQ(again.ranks_done, info.rank_count);
  // And an asynchronous one on the default stream, waited for by dcuda_host_finish alone.
  async_data third{written_before, 0, 0, 0};
  dcuda_host_run_async(context, nullptr, &third, sizeof third);
  dcuda_host_finish(context);
  DCUDA_CHECK_EQ(third.ranks_done, info.rank_count);
  GPU_CHECK(cudaFree(written_before));
  GPU_CHECK(cudaFree(decoy));
}

DCUDA_TEST(async_runs_one_after_another_on_one_stream) {
  require_gpu();
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(async_kernel, 4, info);
  int* written_before = nullptr;
  GPU_CHECK(cudaMalloc(&written_before, sizeof(int)));
  const int value = 41;
  GPU_CHECK(cudaMemcpy(written_before, &value, sizeof value, cudaMemcpyHostToDevice));
  stream_holder held;
  async_data results[3] = {};
  for (async_data& result : results) {
    result.written_before = written_before;
    // The second call waits for the first run before it launches the next.
    dcuda_host_run_async(context, held.stream, &result, sizeof result);
  }
  // Timings read first wait for the last run too; dcuda_host_run_wait still returns its time.
  DCUDA_CHECK(dcuda_host_get_timings(context).empty());
  DCUDA_CHECK_EQ(results[2].ranks_done, info.rank_count);
  DCUDA_CHECK(dcuda_host_run_wait(context) > 0);
  for (const async_data& result : results) {
    DCUDA_CHECK_EQ(result.seen_by_rank0, 41);
    DCUDA_CHECK_EQ(result.ranks_done, info.rank_count);
  }
  dcuda_host_finish(context);
  GPU_CHECK(cudaFree(written_before));
}

__global__ void async_misuse_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (rank == 1) dcuda_notify(gst, 0, DCUDA_COMM_WORLD, 300);  // tags are 0..255
  dcuda_gpu_finish(gst);
}

void print_failed_call(const dcuda_error_info* error, void*) {
  std::printf("handler: %s\n", error->call);
}

DCUDA_CHILD(async_misuse) {
  dcuda_host_set_error_handler(print_failed_call, nullptr);
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(async_misuse_kernel, 2, info);
  stream_holder held;
  dcuda_host_run_async(context, held.stream);
  // No dcuda call from here on: the context's thread must report the error by itself.
  std::this_thread::sleep_for(std::chrono::seconds(30));
  std::printf("the run's error was not reported\n");
}

DCUDA_TEST(async_run_errors_are_reported_by_the_contexts_thread) {
  require_gpu();
  const auto child = run_child("async_misuse");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "dcuda: error: dcuda_host_run_async: rank 1"));
  DCUDA_CHECK(contains(child.output, "tag 300"));
  DCUDA_CHECK(contains(child.output, "handler: dcuda_host_run_async"));
  DCUDA_CHECK(!contains(child.output, "was not reported"));
}

DCUDA_CHILD(wait_without_run) {
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(async_kernel, 2, info);
  dcuda_host_run_wait(context);
}

DCUDA_TEST(run_wait_without_a_run_is_refused) {
  require_gpu();
  const auto child = run_child("wait_without_run");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "dcuda_host_run_wait: no run of this context is in flight"));
}
