// What dcuda_host_context_handle points to: one GPU, its persistent kernel, and the runtime that
// serves it while it runs (command proxy, log printer, watchdog).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "dcuda/host.h"
#include "runtime/device_buffers.h"
#include "runtime/network_proxy.h"
#include "runtime/host_setup.h"
#include "runtime/peer_rings.h"
#include "runtime/pinned_pool.h"
#include "runtime/process_paths.h"
#include "runtime/settings.h"
#include "runtime/rank_heaps.h"
#include "runtime/shared_memory_mappings.h"
#include "runtime/stream_operations.h"

struct dcuda_host_context {
 public:
  dcuda_host_context(dcuda::runtime::settings settings, dcuda_kernel_t kernel,
                     int threads_per_rank);

  const dcuda_rank_info& rank_info() const { return rank_info_; }
  const std::vector<double>& timings() const { return timings_; }

  // Runs the kernel once over a copy of user_data; returns its execution time in ms.
  double run(void* user_data, std::size_t size);

  // dcuda_host_run_async: copies user_data in, launches the kernel on `stream` behind the work
  // queued there, queues the copy of the results back into user_data on the same stream, and
  // returns; a thread of this context serves the run (command proxy, log printer, watchdog)
  // until it ends. A run still in flight is waited for first.
  void run_async(void* user_data, std::size_t size, cudaStream_t stream);

  // Waits until the run run_async started, if any, has ended and been served (its results in
  // user_data, its timings read). Every call on the context but dcuda_host_get_rank_info and the
  // stream-ordered calls that only queue work on a stream waits for it first.
  void wait_for_run();

  // dcuda_host_run_wait: waits as wait_for_run does; the kernel time in ms of the last run
  // run_async started, or nothing when dcuda_host_run_wait has already returned it (or none was
  // started).
  std::optional<double> wait_for_async_run();

  // dcuda_host_share_memory: collective over all processes; maps the allocation behind
  // `allocation` (null: none) into the processes of the node now (docs/api.md).
  void share_memory(void* allocation);

  // The host windows and stream-ordered operations (include/dcuda/host_stream.h).
  // collective_stream_operations waits for the run in flight, if any, and sets them up at the
  // first collective call (dcuda_host_win_create, dcuda_barrier_on_stream: every process makes
  // it). started_stream_operations serves the calls that only queue work on a stream and use no
  // MPI, which a program makes while a run is under way (they feed its ranks' waits); they need a
  // host window to exist, so an error names `call` before the first one.
  dcuda::runtime::stream_operations& collective_stream_operations();
  dcuda::runtime::stream_operations& started_stream_operations(const char* call);

 private:
  // An allocation shared by dcuda_host_share_memory. The other processes keep it mapped until
  // dcuda_host_finish, so it must stay allocated until then: every run checks that it is still
  // the allocation that was shared (its driver identity), before any peer could write into it.
  struct shared_allocation {
    void* base;
    std::size_t size;
    std::uint64_t id;
  };
  void check_shared_allocations() const;
  // A launched kernel and what serving it needs (host_context.cpp).
  struct launched_run;
  // Everything a run does before it is served, on the calling thread: checks, the copy in, the
  // reset of the buffers, the network side of the proxy (collective), the launch on `stream`.
  void launch_run(launched_run& run, const char* call, void* user_data, std::size_t size,
                  cudaStream_t stream);
  // Serves a launched run until its kernel ends (command proxy, log printer, watchdog), then
  // turns what went wrong into an error; returns the kernel's time in ms. `call` names the run
  // in the watchdog's warnings.
  double serve_run(launched_run& run, const char* call);

  dcuda::runtime::settings settings_;
  dcuda_kernel_t kernel_;
  int threads_per_rank_;
  // The set-up's phases, in their order (runtime/host_setup.h).
  dcuda::runtime::process_placement placement_;
  dcuda::runtime::process_paths paths_;
  dcuda::runtime::rank_counts counts_;
  dcuda::runtime::peer_rings rings_;
  dcuda::runtime::device_buffers buffers_;
  dcuda_rank_info rank_info_{};
  dcuda::runtime::shared_memory_mappings shared_memory_;
  // Every rank's heap (dcuda_malloc), shared through shared_memory_ at the context's creation.
  std::optional<dcuda::runtime::rank_heaps> heaps_;
  // Pinned staging of the network path, per direction (runtime/network_proxy.h).
  static constexpr std::size_t staging_bytes = std::size_t{64} << 20;
  std::optional<dcuda::runtime::pinned_pool> outgoing_staging_;
  std::optional<dcuda::runtime::pinned_pool> incoming_staging_;
  // Pinned memory for the target layouts other processes send with typed puts, per run
  // (runtime/received_layouts.h).
  static constexpr std::size_t received_layout_bytes = std::size_t{32} << 20;
  std::optional<dcuda::runtime::pinned_pool> received_layouts_;
  dcuda::runtime::cuda_stream stream_;
  dcuda::runtime::device_array<char> user_data_;
  std::vector<double> timings_;
  std::vector<shared_allocation> shared_allocations_;
  // An asynchronous run's results on their way back: pinned, allocated with the context (and
  // grown only for larger user data), because cudaHostAlloc waits while kernels fill the GPU.
  static constexpr std::size_t returned_data_bytes = std::size_t{64} << 10;
  dcuda::runtime::mapped_array<char> returned_data_;
  // The thread serving the run run_async started (joinable while one is in flight or unjoined),
  // and that run's kernel time, written by it before it ends.
  std::thread run_server_;
  double served_run_ms_ = 0;
  bool unwaited_run_ = false;  // run_async started a run dcuda_host_run_wait has not returned
  // Last: it waits for the GPU's queued work before anything else goes.
  std::optional<dcuda::runtime::stream_operations> stream_operations_;
};
