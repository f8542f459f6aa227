#include "runtime/command_server.h"

#include <exception>
#include <string>

#include "dcuda/detail/protocol/command_channel.h"
#include "runtime/error.h"

namespace dcuda::runtime {

command_server::command_server(device_buffers& buffers, network_proxy* network)
    : buffers_(buffers),
      network_(network),
      commands_(buffers.command_channel(), {.rank_start = buffers.shape().rank_start,
                                            .rank_count = buffers.shape().device_ranks,
                                            .world_size = buffers.shape().world_size}),
      timers_(buffers.shape().device_ranks) {}

void command_server::start_on_device(int device) {
  if (const cudaError_t status = cudaSetDevice(device); status != cudaSuccess) {
    failure_ = "host proxy: cudaSetDevice(" + std::to_string(device) +
               ") failed: " + cudaGetErrorString(status);
    failure_code_ = DCUDA_ERROR_CUDA;
    buffers_.request_abort();
  }
}

bool command_server::poll() {
  if (!failure_.empty()) return false;
  try {
    bool any = serve_command();
    if (network_ != nullptr) any = network_->progress() || any;
    return any;
  } catch (const std::exception& failure) {
    // The ranks cannot go on without their proxy: stop them, report after the run.
    failure_ = failure.what();
    failure_code_ = code_of(failure);
    buffers_.request_abort();
    return false;
  }
}

// Pings are answered by storing the operation number the rank waits for. Messages carry world
// ranks; the per-rank host arrays are indexed by rank on this GPU.
bool command_server::serve_command() {
  network_proxy* network = network_;
  if (network != nullptr && !network->accepting()) return false;  // it is busy with earlier ones
  auto message = commands_.try_take();
  if (!message) {
    commands_.publish_position();
    return false;
  }
  const auto now = cpu_timers::clock::now();
  const int device_rank = message->rank - buffers_.shape().rank_start;
  std::uint32_t* acks = buffers_.host_acks();
  cpu_timers& timers = timers_;
  switch (message->type) {
    case protocol::message_type::timer_start:
      timers.start(device_rank, now);
      break;
    case protocol::message_type::timer_stop:
      timers.stop(device_rank, now);
      break;
    case protocol::message_type::ping:
      if (network != nullptr) {  // answered in order with the rank's staged operations
        network->take_ping(message->rank, static_cast<std::uint32_t>(message->aux));
      } else {
        protocol::system_atomic<std::uint32_t>(acks[device_rank])
            .store(static_cast<std::uint32_t>(message->aux), cuda::memory_order_release);
      }
      break;
    case protocol::message_type::remote_operation:
    case protocol::message_type::world_collective:
      if (network == nullptr) {
        throw error("host proxy: rank " + std::to_string(message->rank) +
                    " sent a message for other processes, but this process runs alone");
      }
      if (message->type == protocol::message_type::remote_operation) {
        network->take_operation(*message);
      } else {
        network->take_world_collective(*message);
      }
      break;
    default:
      break;
  }
  return true;
}

}  // namespace dcuda::runtime
