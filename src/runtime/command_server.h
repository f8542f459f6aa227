// The host proxy's work during a run: it serves the command channel (protocol/command_channel.h)
// while the kernel runs: CPU timers, pings, and, with other processes, the operations and world
// collectives that go to them (runtime/network_proxy.h), which it also moves along.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dcuda/host.h"
#include "runtime/channel_consumer.h"
#include "runtime/cpu_timers.h"
#include "runtime/device_buffers.h"
#include "runtime/network_proxy.h"

namespace dcuda::runtime {

class command_server {
 public:
  // `network`: null when the process runs alone.
  command_server(device_buffers& buffers, network_proxy* network);

  // One pass of the proxy thread: the next command, if any, then the network; true when anything
  // happened. A failure stops the ranks (they cannot go on without their proxy) and is kept for
  // the report after the run; the server then does nothing more.
  bool poll();
  // First, on the proxy thread: selects the GPU there (the CUDA device is per thread), or fails
  // like poll.
  void start_on_device(int device);

  // Read once the proxy thread has been joined.
  const std::string& failure() const { return failure_; }
  dcuda_error_code failure_code() const { return failure_code_; }
  const std::vector<double>& timings() const { return timers_.results(); }

 private:
  bool serve_command();

  device_buffers& buffers_;
  network_proxy* network_;
  channel_consumer commands_;
  cpu_timers timers_;
  std::string failure_;
  dcuda_error_code failure_code_ = DCUDA_ERROR_INTERNAL;
};

}  // namespace dcuda::runtime
