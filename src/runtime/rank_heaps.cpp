#include "runtime/rank_heaps.h"

#include <algorithm>
#include <string>

#include "bootstrap/mpi_session.h"
#include "dcuda/detail/protocol/heap_layout.h"
#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

// Every process's segment order, checked to be the same: the ranks of the others are found by
// their position in those processes' allocations.
void check_same_order(const process_paths& paths, int order) {
  if (paths.world == MPI_COMM_NULL) return;
  std::vector<int> orders(static_cast<std::size_t>(paths.process_count()));
  DCUDA_MPI_CHECK(MPI_Allgather(&order, 1, MPI_INT, orders.data(), 1, MPI_INT, paths.world));
  for (std::size_t p = 0; p < orders.size(); ++p) {
    if (orders[p] == order) continue;
    const auto bytes = [](int o) { return o == 0 ? std::string("0") : std::to_string(1ull << o); };
    throw error(DCUDA_ERROR_SETTING,
                "DCUDA_HEAP_BYTES: process " + std::to_string(paths.process_index) + " has " +
                    bytes(order) + " and process " + std::to_string(p) + " has " +
                    bytes(orders[p]) + "; every process must give its ranks heaps of one size");
  }
}

}  // namespace

rank_heaps::rank_heaps(const process_paths& paths, const bootstrap::rank_layout& ranks,
                       int device_ranks, std::size_t segment_bytes,
                       shared_memory_mappings& shared) {
  const int order = protocol::heap_order_for(segment_bytes);
  if (order < 0 || (order > 0 && (std::size_t{1} << order) != segment_bytes)) {
    throw error(DCUDA_ERROR_SETTING, "DCUDA_HEAP_BYTES: " + std::to_string(segment_bytes) +
                                         " is not 0 nor a power of two from " +
                                         std::to_string(1ull << protocol::heap_min_order) + " to " +
                                         std::to_string(1ull << protocol::heap_max_order));
  }
  check_same_order(paths, order);
  order_ = order;
  if (order_ == 0) return;
  const std::size_t segment = std::size_t{1} << order_;
  const auto count = static_cast<std::size_t>(device_ranks);
  segments_ = device_array<char>(count * segment);
  const std::uint64_t node_bytes = protocol::buddy_node_bytes(protocol::heap_min_order, order_);
  bookkeeping_ = device_array<std::uint8_t>(count * node_bytes);
  allocators_ = device_array<protocol::buddy_heap>(count);
  // One formatted tree, copied to every rank; the allocators point at their copies.
  std::vector<std::uint8_t> fresh(node_bytes);
  protocol::buddy_heap::format(fresh.data(), protocol::heap_min_order, order_);
  std::vector<std::uint8_t> trees(count * node_bytes);
  std::vector<protocol::buddy_heap> allocators;
  allocators.reserve(count);
  for (std::size_t r = 0; r < count; ++r) {
    std::copy(fresh.begin(), fresh.end(),
              trees.begin() + static_cast<std::ptrdiff_t>(r * node_bytes));
    allocators.emplace_back(bookkeeping_.get() + r * node_bytes, protocol::heap_min_order, order_,
                            protocol::buddy_heap::formatted);
  }
  DCUDA_CUDA_CHECK(
      cudaMemcpy(bookkeeping_.get(), trees.data(), trees.size(), cudaMemcpyHostToDevice));
  DCUDA_CUDA_CHECK(cudaMemcpy(allocators_.get(), allocators.data(),
                              count * sizeof(protocol::buddy_heap), cudaMemcpyHostToDevice));

  std::vector<mapped_export> mapped(static_cast<std::size_t>(paths.process_count()));
  // Offered only where some process reaches this one by the peer path (the relation is mutual):
  // a process without peers exports nothing through CUDA IPC, which some systems do not have.
  if (paths.world != MPI_COMM_NULL) {
    mapped = shared.share(paths, paths.any_peer() ? segments_.get() : nullptr);
  }
  row_.assign(static_cast<std::size_t>(ranks.world_size()), protocol::window_entry{});
  for (int p = 0; p < paths.process_count(); ++p) {
    std::uint64_t base = 0;
    if (p == paths.process_index) {
      base = reinterpret_cast<std::uint64_t>(segments_.get());
    } else if (mapped[static_cast<std::size_t>(p)].mapped_base != nullptr) {
      base = reinterpret_cast<std::uint64_t>(mapped[static_cast<std::size_t>(p)].mapped_base) +
             mapped[static_cast<std::size_t>(p)].offset;
    }
    for (int r = 0; r < ranks.ranks_of(p); ++r) {
      protocol::window_entry& entry = row_[static_cast<std::size_t>(ranks.rank_start(p) + r)];
      entry.base = base == 0 ? 0 : base + static_cast<std::uint64_t>(r) * segment;
      entry.size = segment;
      entry.generation = protocol::heap_generation;
      entry.comm = 0;  // DCUDA_COMM_WORLD
    }
  }
}

}  // namespace dcuda::runtime
