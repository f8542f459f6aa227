// What the ranks of a run see of the host windows (dcuda/host_stream.h): per host window slot and
// process, where that process's buffer is mapped on this GPU, and per world rank, where its
// host-initiated notification counters are. The host writes both tables before a run (window
// creation and release wait for a run in flight, so they never change during one); ranks only
// read them, when they put into a host window. The checks such a put makes are here, written once
// for the host's tests and the device.
#pragma once

#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/portability.h"
#include "dcuda/detail/protocol/window_table.h"

namespace dcuda::protocol {

// Host window handles have slots host_window_first_slot.. (window_table.h's encoding): a device
// window's handle (slot below max_windows) is never one.
inline constexpr int host_window_first_slot = 128;
inline constexpr int host_window_slots = 128;
static_assert(host_window_first_slot >= max_windows &&
              host_window_first_slot + host_window_slots <= 256);

struct host_window_entry {
  std::uint64_t base;        // the process's buffer as mapped on this GPU; 0: nothing, or the
                             // process is reached through the network
  std::uint64_t size;        // bytes it exposed (also for a process reached through the network)
  std::uint32_t generation;  // of the slot's live window; 0: no window in the slot
  std::uint32_t pad;
};
static_assert(sizeof(host_window_entry) == 24);

struct host_rank_target {
  std::uint32_t* counters;  // the rank's [tag_count] host-initiated counters, mapped on this GPU;
                            // null: its process is reached through the network
  std::int32_t process;
  std::uint32_t pad;
};
static_assert(sizeof(host_rank_target) == 16);

DCUDA_HD constexpr bool is_host_window_handle(int handle) {
  return handle >= 0 && window_slot(handle) >= host_window_first_slot;
}
// [host_window_slots][process_count]
DCUDA_HD constexpr std::uint64_t host_window_index(int handle, int process, int process_count) {
  return static_cast<std::uint64_t>(window_slot(handle) - host_window_first_slot) *
             static_cast<std::uint64_t>(process_count) +
         static_cast<std::uint64_t>(process);
}

// What is wrong with a rank's put into a host window, in the order the checks are made.
enum class host_put_fault : std::uint8_t {
  none,
  bad_window,     // not a live host window (or the context has none)
  rank_outside,   // rank outside 0..world_size-1
  negative_size,  // offset or size negative
  range_outside,  // [offset, offset + size) outside the target process's buffer
  tag_outside,    // a put_notify's tag outside 0..tag_count-1
};

struct host_put_target {
  host_put_fault fault;
  std::uint64_t destination;  // base + offset, when there is no fault and the process is mapped
  std::uint64_t window_size;  // the target process's buffer (for the complaint)
  std::uint32_t* counters;    // the target rank's row; null: through the network
  std::int32_t process;
  bool through_network;  // the put goes to the host proxy, and the target's proxy lands it
};

// Whether host window `handle` is live in `process`'s column of the ranks' view: a host window's
// handle, of a generation the view holds for that process (created before the run, not freed).
// `windows` is null when the context has no host window.
DCUDA_HD inline bool host_window_live(const host_window_entry* windows, int handle, int process,
                                      int process_count) {
  return windows != nullptr && is_host_window_handle(handle) && window_generation(handle) != 0 &&
         windows[host_window_index(handle, process, process_count)].generation ==
             window_generation(handle);
}

// Checks a put of `size` bytes at `offset` into host window `handle` of world rank `rank`, with a
// notification of `tag` when `notify`. `windows` and `targets` are the two tables (null when the
// context has no host window).
DCUDA_HD inline host_put_target find_host_put_target(const host_window_entry* windows,
                                                     const host_rank_target* targets,
                                                     int process_count, int world_size, int handle,
                                                     int rank, std::int64_t offset,
                                                     std::int64_t size, bool notify, int tag) {
  host_put_target result{host_put_fault::none, 0, 0, nullptr, -1, false};
  if (windows == nullptr || targets == nullptr || !is_host_window_handle(handle) ||
      window_generation(handle) == 0) {
    result.fault = host_put_fault::bad_window;
    return result;
  }
  if (rank < 0 || rank >= world_size) {
    result.fault = host_put_fault::rank_outside;
    return result;
  }
  const host_rank_target target = targets[rank];
  result.process = target.process;
  if (!host_window_live(windows, handle, target.process, process_count)) {
    result.fault = host_put_fault::bad_window;
    return result;
  }
  const host_window_entry entry = windows[host_window_index(handle, target.process, process_count)];
  // A process reached through the network has no base here; its size is known all the same, so
  // the range is checked at the origin, and again where the put lands (check_host_window_put).
  result.through_network = target.counters == nullptr;
  result.window_size = entry.size;
  if (offset < 0 || size < 0) {
    result.fault = host_put_fault::negative_size;
    return result;
  }
  const auto first = static_cast<std::uint64_t>(offset);
  const auto bytes = static_cast<std::uint64_t>(size);
  if (first > entry.size || bytes > entry.size - first ||
      (bytes != 0 && entry.base == 0 && !result.through_network)) {
    result.fault = host_put_fault::range_outside;
    return result;
  }
  if (notify && (tag < 0 || tag >= tag_count)) {
    result.fault = host_put_fault::tag_outside;
    return result;
  }
  if (!result.through_network) result.destination = entry.base + first;
  result.counters = target.counters;
  return result;
}

}  // namespace dcuda::protocol
