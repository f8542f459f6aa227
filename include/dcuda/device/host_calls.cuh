// Calls served by the host runtime through the command channel: the CPU timers of thesis 3.3.3
// and dcuda_ping_host (extension), the round trip the host proxy adds to every operation it
// carries.
#pragma once

#include "dcuda/detail/device/channel_send.cuh"
#include "dcuda/detail/device/collective.cuh"

namespace dcuda::device {

// A rank-collective call whose only effect is one message to the host proxy.
__device__ inline void signal_host(dcuda_state& gst, protocol::call call,
                                   protocol::message_type type) {
  enter_collective(gst.ctx, call);
  if (threadIdx.x == 0) send_signal(gst, gst.commands, type, 0, call);
}

}  // namespace dcuda::device

__device__ inline void dcuda_start_cpu_timer(dcuda_state& gst) {
  dcuda::device::signal_host(gst, dcuda::protocol::call::start_cpu_timer,
                             dcuda::protocol::message_type::timer_start);
}

__device__ inline void dcuda_stop_cpu_timer(dcuda_state& gst) {
  dcuda::device::signal_host(gst, dcuda::protocol::call::stop_cpu_timer,
                             dcuda::protocol::message_type::timer_stop);
}

// Extension: sends a message to the host proxy and waits for its answer. Returns when the host
// has seen every command this rank sent before it.
__device__ inline void dcuda_ping_host(dcuda_state& gst) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::ping_host);
  if (threadIdx.x == 0) {
    const std::uint32_t operation = ++gst.acks_requested;
    device::send_signal(gst, gst.commands, protocol::message_type::ping,
                        static_cast<std::int32_t>(operation), protocol::call::ping_host);
    std::uint32_t* acks = &gst.ctx->host_acks[gst.device_rank];
    device::spin_until(
        gst,
        device::wait_description{protocol::call::ping_host, protocol::wait_kind::host_ack,
                                 static_cast<std::int32_t>(operation), operation},
        [&](std::uint32_t& answered) {
          answered = protocol::system_atomic<std::uint32_t>(*acks).load(cuda::memory_order_acquire);
          return protocol::reached(answered, operation);
        });
  }
  __syncthreads();
}
