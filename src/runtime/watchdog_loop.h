// The main thread's part of a run: it waits for the kernel and asks the watchdog
// (runtime/watchdog.h) about the ranks every millisecond meanwhile.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "runtime/device_buffers.h"
#include "runtime/watchdog.h"

namespace dcuda::runtime {

struct run_outcome {
  cudaError_t kernel_status = cudaSuccess;
  std::optional<std::string> hang_report;  // set when the watchdog found a standstill
  std::optional<int> signal;  // SIGTERM or SIGINT reached the process (runtime/signal_watch.h)
};

// Waits until `finished` has happened. The watchdog is asked only once `started` has happened
// (a kernel queued behind other work on a stream waits for nothing of dcuda's). Warnings are
// printed (as `call`'s) and the run goes on; after a standstill, or a SIGTERM or SIGINT
// (runtime/signal_watch.h), the ranks get a moment to stop (waiting ranks trap on the abort
// flag), then the run is given up whatever they do.
run_outcome watch_until_finished(cudaEvent_t started, cudaEvent_t finished, watchdog& dog,
                                 const device_buffers& buffers, const char* call);

}  // namespace dcuda::runtime
