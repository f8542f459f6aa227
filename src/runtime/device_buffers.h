// Everything a run needs in device and host memory, and the dcuda_context that points to it.
// Sized once per host context (by its rank counts) and reset before every run.
#pragma once

#include <cstddef>
#include <vector>

#include "dcuda/detail/protocol/device_context.h"
#include "dcuda/detail/protocol/peer_ring.h"
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

// What the device needs of the rings (runtime/peer_rings.h): where this GPU's rings lie, and the
// words it writes into the memory of the other GPUs of the node.
struct ring_wiring {
  protocol::ring_memory_layout layout{};  // peer_gpus 0: no rings
  char* memory = nullptr;                 // this GPU's ring memory, zeroed before every run
  std::size_t bytes = 0;
  // Per ring, where rank 0 publishes how far it has taken it.
  std::vector<std::uint32_t*> taken;
  // Per ring, where this GPU's leader writes its word in that GPU's board; empty: barriers of
  // DCUDA_COMM_WORLD meet through the host proxies (protocol/node_barrier.h).
  std::vector<std::uint64_t*> board_out;
  // Whether the ranks may count notifications in the peers' rings (process_paths::peer_atomics).
  bool counts = false;
};

class device_buffers {
 public:
  static constexpr std::uint32_t command_capacity = 1024;  // entries, power of two
  static constexpr std::uint32_t log_capacity = 4096;

  // `routes`: the path to every world rank (protocol/routes.h); this GPU's ranks get their
  // notification counters here.
  device_buffers(world_shape shape, const ring_wiring& rings,
                 std::vector<protocol::rank_route> routes, double report_wait_after_s);

  // Zeroes counters, tables and channels, and writes the context for a run over `user_data`.
  // Enqueued on `stream`; the host-memory parts are reset at once.
  void prepare_run(void* user_data, std::uint32_t first_window_generation, cudaStream_t stream);

  // The host windows of the next runs: the host-initiated notifications their ranks count in
  // their waits (dcuda_context::host_notifications), and the windows and counters their ranks put
  // into (host_windows, host_rank_targets). This GPU's memory, owned by the stream operations.
  void use_host_windows(std::uint32_t* counters, std::uint32_t* taken,
                        const protocol::host_window_entry* windows,
                        const protocol::host_rank_target* targets);

  // The rank heaps of every run (runtime/rank_heaps.h): this GPU's segments and allocators, and
  // the heap window's row, written into the window table before each run.
  void use_heaps(char* segments, protocol::buddy_heap* allocators, int order,
                 std::vector<protocol::window_entry> row);
  // This GPU's ranks' entries of the heap window (device_ranks of them; empty without heaps).
  const protocol::window_entry* own_heap_entries() const {
    return heap_row_.empty() ? nullptr
                             : heap_row_.data() + static_cast<std::ptrdiff_t>(shape_.rank_start);
  }

  const world_shape& shape() const { return shape_; }
  dcuda_context* device_context() const { return context_device_.get(); }

  const protocol::wait_record* wait_records() const { return wait_records_.host(); }
  const protocol::error_report& error() const { return *error_.host(); }
  // 0, or the layout stamp of a kernel compiled against other dcuda headers, which it wrote
  // before it stopped (dcuda_context::layout_mismatch).
  std::uint32_t kernel_layout_stamp() const;
  std::uint32_t* host_acks() const { return host_acks_.host(); }
  void request_abort() const;

  // For the host proxy.
  std::uint32_t* device_notifications() const { return device_notifications_.get(); }
  // The committed datatypes as this GPU reads them (device memory).
  const protocol::type_entry* type_table() const { return context_.types; }
  // The delivery agent's queue as the host sees it; null with one process (no agent).
  protocol::delivery_queue* delivery_queue() const { return delivery_queue_.host(); }
  bool uses_network() const { return context_.uses_network != 0; }
  bool meets_on_gpus() const { return context_.node_barrier != 0; }
  protocol::window_entry* window_table() const { return windows_.get(); }
  protocol::world_collective_result* world_collective_result() const {
    return world_collective_result_.host();
  }
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
  std::vector<protocol::window_entry> heap_row_;  // [world_size], or empty without heaps
  device_array<protocol::rank_route> rank_routes_;
  device_array<dcuda_context> context_device_;
  char* ring_memory_ = nullptr;  // owned by peer_rings
  std::size_t ring_bytes_ = 0;
  device_array<std::uint32_t*> ring_taken_;
  device_array<std::uint64_t*> board_out_;

  mapped_array<std::uint32_t> host_acks_;
  mapped_array<std::uint32_t> host_words_;  // abort flag, 2 consumer positions, layout mismatch
  mapped_array<protocol::wait_record> wait_records_;
  mapped_array<protocol::error_report> error_;
  mapped_array<protocol::channel_entry> command_entries_;
  mapped_array<protocol::channel_entry> log_entries_;
  mapped_array<protocol::world_collective_result> world_collective_result_;
  mapped_array<protocol::window_offer> window_offers_;
  mapped_array<protocol::delivery_queue> delivery_queue_;  // one, with several processes

  void set_rank_routes(std::vector<protocol::rank_route> routes);
  void set_rings(const ring_wiring& rings);
  void set_node_barrier(const std::vector<std::uint64_t*>& board_out);
};

}  // namespace dcuda::runtime
