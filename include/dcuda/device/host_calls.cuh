// Calls served by the host runtime through the command channel: the CPU timers of thesis 3.3.3
// and dcuda_ping_host (extension), the round trip the host proxy adds to every operation it
// carries.
#pragma once

#include "dcuda/device/state.cuh"
#include "dcuda/detail/device/host_signal.cuh"
#include "dcuda/detail/device/rank_entry.cuh"

// (rank). Starts the rank's next CPU-timer measurement: one message to the host, which reads its
// clock when it takes it; does not wait for the host.
__device__ inline void dcuda_start_cpu_timer(dcuda_state& gst) {
  dcuda::device::signal_host(gst, dcuda::protocol::call::start_cpu_timer,
                             dcuda::protocol::message_type::timer_start);
}

// (rank). Stops the rank's current CPU-timer measurement, as dcuda_start_cpu_timer starts it.
__device__ inline void dcuda_stop_cpu_timer(dcuda_state& gst) {
  dcuda::device::signal_host(gst, dcuda::protocol::call::stop_cpu_timer,
                             dcuda::protocol::message_type::timer_stop);
}

// Extension. (rank). Sends a message to the host proxy and waits for its answer. Returns when the
// host has seen every command this rank sent before it.
__device__ inline void dcuda_ping_host(dcuda_state& gst) {
  using namespace dcuda;
  device::enter_rank_call(gst.ctx, protocol::call::ping_host);
  if (threadIdx.x == 0) device::ping_host_and_wait(gst);
  __syncthreads();
}
