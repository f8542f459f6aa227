// The rank heaps (dcuda/device/heap.cuh): every rank owns a segment of 2^order bytes of its
// GPU's memory, carved by a buddy allocator (protocol/buddy_heap.h) that only the rank's thread
// 0 touches. A process's segments are one allocation, shared with the processes of its node when
// the host context is created, and the segments of all ranks together form one window of
// DCUDA_COMM_WORLD in a reserved slot: a global pointer into a heap names that window, the rank
// and the offset in its segment, so that put, get and the atomics reach it as any window, and an
// allocation needs no exchange and no collective call.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/buddy_heap.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/portability.h"
#include "dcuda/detail/protocol/window_table.h"

namespace dcuda::protocol {

// The window slot of the heaps: always in use, never handed out by dcuda_win_create.
inline constexpr int heap_slot = max_windows - 1;
// Its generation, the same in every run and every process: a heap allocation lives until it is
// freed, across the runs of a host context.
inline constexpr std::uint32_t heap_generation = 0x7fffffu;
inline constexpr int heap_window = encode_window(heap_slot, heap_generation);

// The smallest block: every allocation is aligned to 256 bytes (any atomic word, any vector
// load, and the coalescing unit of the copies).
inline constexpr int heap_min_order = 8;
// The largest segment: a window's part is at most 2^31 - 1 bytes.
inline constexpr int heap_max_order = 30;

// The order of the segment that holds `bytes` (rounded up to a power of two, at least the
// smallest block); 0 for 0 bytes (no heap); -1 beyond 2^heap_max_order bytes.
DCUDA_HD constexpr int heap_order_for(std::uint64_t bytes) {
  if (bytes == 0) return 0;
  const int order = buddy_order_of(bytes);
  if (order > heap_max_order) return -1;
  return order < heap_min_order ? heap_min_order : order;
}

// Why dcuda_free (or dcuda_win_free on the heap window) refused a pointer: the fourth value of
// an error_code::bad_heap_free report.
enum class heap_free_refusal : std::uint8_t {
  not_heap,          // the pointer names another window
  other_rank,        // it names another rank's heap: each rank frees its own allocations
  not_allocated,     // no allocation starts there (never made, or freed already)
  inside_block,      // it points inside an allocation, not at its first byte
  outside_segment,   // past the rank's segment
  heap_window_free,  // dcuda_win_free of the heap window itself
};

}  // namespace dcuda::protocol
