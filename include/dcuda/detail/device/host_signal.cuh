// Calls whose work is a message to the host runtime through the command channel.
#pragma once

#include "dcuda/detail/device/channel_send.cuh"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/spin_wait.cuh"

namespace dcuda::device {

// A rank call whose only effect is one message to the host proxy.
__device__ inline void signal_host(dcuda_state& gst, protocol::call call,
                                   protocol::message_type type) {
  enter_rank_call(gst.ctx, call);
  if (threadIdx.x == 0) send_signal(gst, gst.commands, type, 0, call);
}

// dcuda_ping_host, thread 0: the ping, then the wait for the host's answer to it.
__device__ inline void ping_host_and_wait(dcuda_state& gst) {
  const std::uint32_t operation = ++gst.acks_requested;
  send_signal(gst, gst.commands, protocol::message_type::ping, static_cast<std::int32_t>(operation),
              protocol::call::ping_host);
  std::uint32_t* acks = &gst.ctx->host_acks[gst.device_rank];
  spin_until(gst,
             wait_description{protocol::call::ping_host, protocol::wait_kind::host_ack,
                              static_cast<std::int32_t>(operation), operation},
             [&](std::uint32_t& answered) {
               answered =
                   protocol::system_atomic<std::uint32_t>(*acks).load(cuda::memory_order_acquire);
               return protocol::reached(answered, operation);
             });
}

}  // namespace dcuda::device
