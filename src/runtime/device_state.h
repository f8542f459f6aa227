// Everything a run needs in device and host memory, and the dcuda_context that points to it.
// Sized once per host context (by its rank counts) and reset before every run.
#pragma once

#include <vector>

#include "dcuda/detail/protocol/device_context.h"
#include "runtime/cuda_memory.h"

namespace dcuda::runtime {

// Where this GPU's ranks stand in DCUDA_COMM_WORLD.
struct world_shape {
  int device_ranks = 0;
  int world_size = 0;
  int rank_start = 0;
  int process_count = 1;
  int process_index = 0;
};

class device_state {
 public:
  static constexpr std::uint32_t command_capacity = 1024;  // entries, power of two
  static constexpr std::uint32_t log_capacity = 4096;

  device_state(world_shape shape, double report_wait_after_s);

  // Writes the path to every world rank (protocol/routes.h); once, before the first run.
  void set_rank_routes(const std::vector<protocol::rank_route>& routes);

  // The rings of this GPU's ranks (protocol/peer_ring.h), laid out by `layout`; once, before the
  // first run; none when layout.peer_gpus is 0.
  void allocate_rings(const protocol::ring_memory_layout& layout);
  char* ring_memory() const { return ring_memory_.get(); }
  // Per ring, where rank 0 publishes how far it has taken it (process_group::ring_taken).
  void set_ring_taken(const std::vector<std::uint32_t*>& taken);
  // Barriers of DCUDA_COMM_WORLD meet on the GPUs (protocol/node_barrier.h): per ring, where this
  // GPU's leader writes its word in that GPU's board (process_group::board_out); once, after
  // allocate_rings.
  void set_node_barrier(const std::vector<std::uint64_t*>& board_out);

  // Zeroes counters, tables and channels, and writes the context for a run over `user_data`.
  // Enqueued on `stream`; the host-memory parts are reset at once.
  void prepare_run(void* user_data, cudaStream_t stream);

  const world_shape& shape() const { return shape_; }
  dcuda_context* device_context() const { return context_device_.get(); }

  const protocol::wait_record* wait_records() const { return wait_records_.host(); }
  const protocol::error_report& error() const { return *error_.host(); }
  std::uint32_t* host_acks() const { return host_acks_.host(); }
  void request_abort() const;

  // For the host proxy.
  std::uint32_t* device_notifications() const { return device_notifications_.get(); }
  // The delivery agent's queue as the host sees it; null with one process (no agent).
  protocol::delivery_queue* delivery_queue() const { return delivery_queue_.host(); }
  bool uses_network() const { return context_.uses_network != 0; }
  bool meets_on_gpus() const { return context_.node_barrier != 0; }
  protocol::window_entry* windows() const { return windows_.get(); }
  protocol::world_collective_result* collective_result() const { return collective_result_.host(); }
  const protocol::window_offer* window_offers() const { return window_offers_.host(); }

  // Channel views as the host sees them (host pointers for what lives in host memory).
  protocol::channel_view command_channel() const;
  protocol::channel_view log_channel() const;

 private:
  world_shape shape_;
  dcuda_context context_{};  // as sent to the device (device pointers)

  device_array<std::uint32_t> device_notifications_;
  // barrier, first_error, 2 tickets, 2 cached positions, 2 poller flags, finished ranks
  device_array<std::uint32_t> device_words_;
  device_array<protocol::window_entry> windows_;
  device_array<protocol::rank_route> rank_routes_;
  device_array<dcuda_context> context_device_;
  device_array<char> ring_memory_;
  device_array<std::uint32_t*> ring_taken_;
  device_array<std::uint64_t*> board_out_;

  mapped_array<std::uint32_t> host_acks_;
  mapped_array<std::uint32_t> host_words_;  // abort flag, 2 consumer positions
  mapped_array<protocol::wait_record> wait_records_;
  mapped_array<protocol::error_report> error_;
  mapped_array<protocol::channel_entry> command_entries_;
  mapped_array<protocol::channel_entry> log_entries_;
  mapped_array<protocol::world_collective_result> collective_result_;
  mapped_array<protocol::window_offer> window_offers_;
  mapped_array<protocol::delivery_queue> delivery_queue_;  // one, with several processes
};

}  // namespace dcuda::runtime
