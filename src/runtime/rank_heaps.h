// The rank heaps of this GPU (protocol/heap_layout.h, dcuda/device/heap.cuh): one allocation
// that holds every rank's segment, each rank's buddy allocator with its bookkeeping in device
// memory, and the heap window's row of the window table. Created with the host context and kept
// for all its runs, so that an allocation outlives the run that made it.
#pragma once

#include <cstddef>
#include <vector>

#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/buddy_heap.h"
#include "dcuda/detail/protocol/window_table.h"
#include "runtime/cuda_memory.h"
#include "runtime/process_paths.h"
#include "runtime/shared_memory_mappings.h"

namespace dcuda::runtime {

class rank_heaps {
 public:
  // Collective over paths.world: every process offers its segments to the processes of its node
  // (through `shared`) and learns where theirs are mapped here. `segment_bytes` (0, or a power of
  // two from 2^heap_min_order to 2^heap_max_order) must be the same in every process; a process
  // whose value differs gets an error naming both.
  rank_heaps(const process_paths& paths, const bootstrap::rank_layout& ranks, int device_ranks,
             std::size_t segment_bytes, shared_memory_mappings& shared);

  // The order of a segment; 0 without heaps.
  int order() const { return order_; }
  char* segments() const { return segments_.get(); }
  protocol::buddy_heap* allocators() const { return allocators_.get(); }
  // The heap window's entry of every world rank, as this GPU reaches it: its own ranks' segments,
  // those of the processes it reaches by the peer path as mapped here; base 0 for ranks reached
  // through the network, whose own proxy lands what is put there. Empty without heaps.
  const std::vector<protocol::window_entry>& window_row() const { return row_; }

 private:
  int order_ = 0;
  device_array<char> segments_;
  device_array<std::uint8_t> bookkeeping_;
  device_array<protocol::buddy_heap> allocators_;
  std::vector<protocol::window_entry> row_;
};

}  // namespace dcuda::runtime
