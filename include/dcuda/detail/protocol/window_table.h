// Windows (thesis 3.3.2). A window is a slot number agreed on by all ranks of a communicator:
// window creation is collective and happens in the same order on every rank, so each rank picks
// the same lowest free slot from its own view, and no rank needs to ask another. The table holds,
// per slot and rank, what that rank exposed; a generation number makes stale handles detectable.
#pragma once

#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

struct window_entry {
  std::uint64_t base;        // device address the rank exposed
  std::uint64_t size;        // bytes
  std::uint32_t generation;  // handle generation that created this entry; 0 = free
  std::int32_t comm;         // communicator of the window
  std::uint64_t pad;
};
static_assert(sizeof(window_entry) == 32);

// Handle layout: generation in the high bits, slot in the low 8 bits. Generations start at 1, so
// a valid handle is never DCUDA_WIN_NONE (-1) nor a small integer a user might pass by mistake.
DCUDA_HD constexpr int encode_window(int slot, std::uint32_t generation) {
  return static_cast<int>(((generation & 0x7fffffu) << 8) | static_cast<std::uint32_t>(slot));
}
DCUDA_HD constexpr int window_slot(int handle) {
  return handle & 0xff;
}
DCUDA_HD constexpr std::uint32_t window_generation(int handle) {
  return static_cast<std::uint32_t>(handle) >> 8;
}
DCUDA_HD constexpr bool window_handle_well_formed(int handle) {
  return handle >= 0 && window_slot(handle) < max_windows && window_generation(handle) != 0;
}
DCUDA_HD constexpr std::uint32_t next_generation(std::uint32_t generation) {
  const std::uint32_t next = (generation + 1) & 0x7fffffu;
  return next == 0 ? 1u : next;
}

// Where run `run` (0, 1, ... of one context) starts every slot's generation: 4096 generations
// apart, so that a handle from one of the 2047 runs before is refused (unless one slot saw more
// than 4096 creations in one run).
inline constexpr std::uint32_t generations_per_run = 4096;
DCUDA_HD constexpr std::uint32_t first_window_generation(std::uint32_t run) {
  return (run * generations_per_run) & 0x7fffffu;
}

// Lowest slot whose bit is clear in `in_use`, or -1 when all are taken.
DCUDA_HD constexpr int lowest_free_slot(std::uint32_t in_use) {
  for (int slot = 0; slot < max_windows; ++slot) {
    if ((in_use & (1u << slot)) == 0) return slot;
  }
  return -1;
}

// Entry of (slot, rank) in a table laid out [max_windows][ranks].
DCUDA_HD constexpr std::uint32_t window_index(int slot, std::uint32_t rank, std::uint32_t ranks) {
  return static_cast<std::uint32_t>(slot) * ranks + rank;
}

// [offset, offset + size) inside a window of `window_size` bytes, without overflow.
DCUDA_HD constexpr bool range_inside_window(std::int64_t offset, std::int64_t size,
                                            std::uint64_t window_size) {
  return offset >= 0 && size >= 0 && static_cast<std::uint64_t>(offset) <= window_size &&
         static_cast<std::uint64_t>(size) <= window_size - static_cast<std::uint64_t>(offset);
}

// [address, address + size) inside the window [base, base + window_size).
DCUDA_HD constexpr bool buffer_inside_window(std::uint64_t address, std::int64_t size,
                                             std::uint64_t base, std::uint64_t window_size) {
  return address >= base &&
         range_inside_window(static_cast<std::int64_t>(address - base), size, window_size);
}

}  // namespace dcuda::protocol
