// Everything a run needs in device and host memory, and the dcuda_context that points to it.
// Sized once per host context (by its rank count) and reset before every run.
#pragma once

#include "protocol/device_context.h"
#include "runtime/cuda_memory.h"

namespace dcuda::runtime {

class device_state {
 public:
  static constexpr std::uint32_t command_capacity = 1024;  // entries, power of two
  static constexpr std::uint32_t log_capacity = 4096;

  device_state(int device_ranks, double report_wait_after_s);

  // Zeroes counters, tables and channels, and writes the context for a run over `user_data`.
  // Enqueued on `stream`; the host-memory parts are reset at once.
  void prepare_run(void* user_data, cudaStream_t stream);

  dcuda_context* device_context() const { return context_device_.get(); }

  const protocol::wait_record* wait_records() const { return wait_records_.host(); }
  const protocol::error_report& error() const { return *error_.host(); }
  std::uint32_t* host_acks() const { return host_acks_.host(); }
  void request_abort() const;

  // Channel views as the host sees them (host pointers for what lives in host memory).
  protocol::channel_view command_channel() const;
  protocol::channel_view log_channel() const;

 private:
  int device_ranks_;
  dcuda_context context_{};  // as sent to the device (device pointers)

  device_array<std::uint32_t> device_notifications_;
  device_array<std::uint32_t> device_words_;  // barrier, first_error, 2 tickets, 2 cached positions
  device_array<protocol::window_entry> windows_;
  device_array<dcuda_context> context_device_;

  mapped_array<std::uint32_t> host_notifications_;
  mapped_array<std::uint32_t> host_acks_;
  mapped_array<std::uint32_t> host_words_;  // abort flag, 2 consumer positions
  mapped_array<protocol::wait_record> wait_records_;
  mapped_array<protocol::error_report> error_;
  mapped_array<protocol::channel_entry> command_entries_;
  mapped_array<protocol::channel_entry> log_entries_;
};

}  // namespace dcuda::runtime
