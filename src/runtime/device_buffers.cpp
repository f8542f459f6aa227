#include "runtime/device_buffers.h"

#include <utility>

#include "datatypes/type_registry.h"
#include "dcuda/detail/protocol/heap_layout.h"
#include "dcuda/detail/protocol/limits.h"

namespace dcuda::runtime {
namespace {

// Offsets in device_words_ / host_words_.
enum device_word {
  barrier_word,
  first_error_word,
  command_ticket,
  log_ticket,
  command_seen,
  log_seen,
  command_poller,
  log_poller,
  finished_word,
  device_word_count
};
enum host_word {
  abort_word,
  command_consumed,
  log_consumed,
  layout_mismatch_word,
  host_word_count
};

}  // namespace

device_buffers::device_buffers(world_shape shape, const ring_wiring& rings,
                               std::vector<protocol::rank_route> routes, double report_wait_after_s)
    : shape_(shape),
      device_notifications_(static_cast<std::size_t>(shape.device_ranks) * protocol::tag_count),
      device_words_(device_word_count),
      windows_(static_cast<std::size_t>(shape.world_size) * protocol::max_windows),
      rank_routes_(static_cast<std::size_t>(shape.world_size)),
      context_device_(1),
      host_acks_(static_cast<std::size_t>(shape.device_ranks)),
      host_words_(host_word_count),
      wait_records_(static_cast<std::size_t>(shape.device_ranks)),
      error_(1),
      command_entries_(command_capacity),
      log_entries_(log_capacity),
      world_collective_result_(1),
      window_offers_(static_cast<std::size_t>(shape.device_ranks)),
      // Allocated now: cudaHostAlloc does not return while a kernel fills the GPU.
      delivery_queue_(shape.process_count > 1 ? 1 : 0) {
  context_.layout_stamp = protocol::context_layout_stamp;
  context_.layout_mismatch = host_words_.device() + layout_mismatch_word;
  context_.rank_start = shape.rank_start;
  context_.world_size = shape.world_size;
  context_.device_ranks = shape.device_ranks;
  context_.process_count = shape.process_count;
  context_.process_index = shape.process_index;
  context_.uses_network = 0;
  context_.device_notifications = device_notifications_.get();
  context_.finished_ranks = device_words_.get() + finished_word;
  context_.delivery_queue = delivery_queue_.device();
  context_.barrier_arrivals = device_words_.get() + barrier_word;
  context_.first_error = device_words_.get() + first_error_word;
  context_.windows = windows_.get();
  context_.rank_routes = rank_routes_.get();
  int device = 0;
  DCUDA_CUDA_CHECK(cudaGetDevice(&device));
  context_.types = datatypes::type_registry::instance().device_table(device);
  context_.collective_result = world_collective_result_.device();
  context_.window_offers = window_offers_.device();
  context_.host_acks = host_acks_.device();
  context_.abort_requested = host_words_.device() + abort_word;
  context_.wait_records = wait_records_.device();
  context_.error = error_.device();
  context_.commands = {command_entries_.device(),
                       command_capacity,
                       device_words_.get() + command_ticket,
                       host_words_.device() + command_consumed,
                       device_words_.get() + command_seen,
                       device_words_.get() + command_poller};
  context_.logs = {log_entries_.device(),
                   log_capacity,
                   device_words_.get() + log_ticket,
                   host_words_.device() + log_consumed,
                   device_words_.get() + log_seen,
                   device_words_.get() + log_poller};
  context_.report_wait_after_ns = static_cast<std::uint64_t>(report_wait_after_s * 1e9);
  set_rings(rings);
  if (!rings.board_out.empty()) set_node_barrier(rings.board_out);
  set_rank_routes(std::move(routes));
}

void device_buffers::set_rank_routes(std::vector<protocol::rank_route> routes) {
  if (routes.size() != rank_routes_.size()) {
    throw dcuda::runtime::error("device_buffers: " + std::to_string(routes.size()) +
                                " routes for " + std::to_string(rank_routes_.size()) +
                                " world ranks");
  }
  for (int r = 0; r < shape_.device_ranks; ++r) {
    routes[static_cast<std::size_t>(shape_.rank_start + r)].counters =
        device_notifications_.get() + r * protocol::tag_count;
  }
  context_.uses_network = 0;
  for (const auto& r : routes) {
    if (static_cast<protocol::route>(r.path) == protocol::route::network) context_.uses_network = 1;
  }
  DCUDA_CUDA_CHECK(cudaMemcpy(rank_routes_.get(), routes.data(),
                              routes.size() * sizeof(protocol::rank_route),
                              cudaMemcpyHostToDevice));
}

void device_buffers::set_rings(const ring_wiring& rings) {
  ring_memory_ = rings.memory;
  ring_bytes_ = rings.bytes;
  context_.ring_memory = rings.memory;
  context_.ring_peers = rings.layout.peer_gpus;
  context_.ring_slots = rings.layout.slots;
  context_.ring_counts = rings.counts ? 1u : 0u;
  context_.board = rings.layout.peer_gpus == 0
                       ? nullptr
                       : reinterpret_cast<std::uint64_t*>(rings.memory + rings.layout.board());
  const std::vector<std::uint32_t*>& taken = rings.taken;
  if (taken.size() != context_.ring_peers) {
    throw dcuda::runtime::error("device_buffers: " + std::to_string(taken.size()) +
                                " ring positions for " + std::to_string(context_.ring_peers) +
                                " rings");
  }
  ring_taken_ = device_array<std::uint32_t*>(taken.size());
  if (!taken.empty()) {
    DCUDA_CUDA_CHECK(cudaMemcpy(ring_taken_.get(), taken.data(),
                                taken.size() * sizeof(std::uint32_t*), cudaMemcpyHostToDevice));
  }
  context_.ring_taken = ring_taken_.get();
}

void device_buffers::set_node_barrier(const std::vector<std::uint64_t*>& board_out) {
  if (board_out.size() != context_.ring_peers || board_out.empty()) {
    throw dcuda::runtime::error("device_buffers: " + std::to_string(board_out.size()) +
                                " board words for " + std::to_string(context_.ring_peers) +
                                " rings");
  }
  board_out_ = device_array<std::uint64_t*>(board_out.size());
  DCUDA_CUDA_CHECK(cudaMemcpy(board_out_.get(), board_out.data(),
                              board_out.size() * sizeof(std::uint64_t*), cudaMemcpyHostToDevice));
  context_.board_out = board_out_.get();
  context_.node_barrier = 1;
}

void device_buffers::use_host_windows(std::uint32_t* counters, std::uint32_t* taken,
                                      const protocol::host_window_entry* windows,
                                      const protocol::host_rank_target* targets) {
  context_.host_notifications = counters;
  context_.host_notifications_taken = taken;
  context_.host_windows = windows;
  context_.host_rank_targets = targets;
}

void device_buffers::use_heaps(char* segments, protocol::buddy_heap* allocators, int order,
                               std::vector<protocol::window_entry> row) {
  if (order != 0 && row.size() != static_cast<std::size_t>(shape_.world_size)) {
    throw dcuda::runtime::error("device_buffers: a heap window row of " +
                                std::to_string(row.size()) + " entries for " +
                                std::to_string(shape_.world_size) + " world ranks");
  }
  context_.heap = segments;
  context_.heaps = allocators;
  context_.heap_order = static_cast<std::uint32_t>(order);
  heap_row_ = std::move(row);
}

void device_buffers::prepare_run(void* user_data, std::uint32_t first_window_generation,
                                 cudaStream_t stream) {
  context_.user_data = user_data;
  context_.first_window_generation = first_window_generation;
  device_notifications_.zero_async(stream);
  if (ring_bytes_ != 0) DCUDA_CUDA_CHECK(cudaMemsetAsync(ring_memory_, 0, ring_bytes_, stream));
  device_words_.zero_async(stream);
  windows_.zero_async(stream);
  if (!heap_row_.empty()) {
    protocol::window_entry* heap_entries =
        windows_.get() +
        static_cast<std::size_t>(protocol::heap_slot) * static_cast<std::size_t>(shape_.world_size);
    DCUDA_CUDA_CHECK(cudaMemcpyAsync(heap_entries, heap_row_.data(),
                                     heap_row_.size() * sizeof(protocol::window_entry),
                                     cudaMemcpyHostToDevice, stream));
  }
  DCUDA_CUDA_CHECK(cudaMemcpyAsync(context_device_.get(), &context_, sizeof(context_),
                                   cudaMemcpyHostToDevice, stream));
  host_acks_.zero();
  world_collective_result_.zero();
  window_offers_.zero();
  delivery_queue_.zero();
  host_words_.zero();
  wait_records_.zero();
  error_.zero();
  command_entries_.zero();
  log_entries_.zero();
}

std::uint32_t device_buffers::kernel_layout_stamp() const {
  return protocol::system_atomic<std::uint32_t>(host_words_.host()[layout_mismatch_word])
      .load(cuda::memory_order_acquire);
}

void device_buffers::request_abort() const {
  protocol::system_atomic<std::uint32_t>(host_words_.host()[abort_word])
      .store(1u, cuda::memory_order_release);
}

protocol::channel_view device_buffers::command_channel() const {
  return {command_entries_.host(),
          command_capacity,
          nullptr,
          host_words_.host() + command_consumed,
          nullptr,
          nullptr};
}

protocol::channel_view device_buffers::log_channel() const {
  return {log_entries_.host(),
          log_capacity,
          nullptr,
          host_words_.host() + log_consumed,
          nullptr,
          nullptr};
}

}  // namespace dcuda::runtime
