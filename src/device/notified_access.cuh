// dcuda_put, dcuda_put_notify, dcuda_notify, dcuda_win_flush (thesis listing 3.5, section 4.5).
// On one GPU the rank does everything itself: its threads copy into the target's window, then
// thread 0 bumps the target's counter with a release atomic, so the data is visible before the
// notification. Operations are complete when they return, which gives issue-order delivery to
// every target and makes dcuda_win_flush a check of its window only.
#pragma once

#include "device/block_copy.cuh"
#include "device/window.cuh"
#include "protocol/notification_counters.h"

namespace dcuda::device {

// Checks the arguments of a put and returns the target address. Both window entries are loaded
// before either is used, so their two global loads overlap.
__device__ inline void* checked_put_target(const dcuda_state& gst, protocol::call call,
                                           dcuda_win win, int rank, int offset, int size,
                                           const void* buffer, int* target_device_rank) {
  const int slot = checked_window_slot(gst, call, win);
  const dcuda_comm comm = window_comm(gst, slot);
  check_rank(gst, call, comm, rank);
  const int target = device_rank_of(gst, comm, rank);
  const protocol::window_entry own = window_of(gst, slot, gst.device_rank);
  const protocol::window_entry remote = window_of(gst, slot, target);
  if (remote.generation != protocol::window_generation(win)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::window_not_on_target, win, rank);
  }
  if (size < 0) fail(gst.ctx, gst.world_rank, call, protocol::error_code::negative_size, size);
  if (!protocol::range_inside_window(offset, size, remote.size)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::target_range_outside, offset, size,
         static_cast<std::int64_t>(remote.size), rank);
  }
  const auto source = reinterpret_cast<std::uint64_t>(buffer);
  if (!protocol::buffer_inside_window(source, size, own.base, own.size)) {
    fail(gst.ctx, gst.world_rank, call, protocol::error_code::source_outside_window,
         static_cast<std::int64_t>(source), static_cast<std::int64_t>(own.base),
         static_cast<std::int64_t>(own.size), size);
  }
  *target_device_rank = target;
  return reinterpret_cast<void*>(remote.base + static_cast<std::uint64_t>(offset));
}

// Thread 0 counts one notification at the target. Must follow a block barrier so that the
// release covers every thread's stores (PTX release is cumulative over what the barrier ordered
// before it). A reduction, not an atomic: the sender needs no answer, so it does not wait for one.
__device__ inline void signal_device_rank(const dcuda_state& gst, int target_device_rank, int tag) {
  if (threadIdx.x == 0) {
    std::uint32_t* counter =
        gst.notifications + protocol::counter_index(static_cast<std::uint32_t>(target_device_rank),
                                                    static_cast<std::uint32_t>(tag));
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
  }
}

}  // namespace dcuda::device

__device__ inline void dcuda_put(dcuda_state& gst, dcuda_win win, int rank, int offset, int size,
                                 void* buffer) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::put);
  int target = 0;
  void* destination = device::checked_put_target(gst, protocol::call::put, win, rank, offset, size,
                                                 buffer, &target);
  device::block_copy(destination, buffer, static_cast<std::uint64_t>(size));
  __syncthreads();  // complete on return: the caller may reuse its buffer at once
}

__device__ inline void dcuda_put_notify(dcuda_state& gst, dcuda_win win, int rank, int offset,
                                        int size, void* buffer, int tag) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::put_notify);
  device::check_tag(gst, protocol::call::put_notify, tag);
  int target = 0;
  void* destination = device::checked_put_target(gst, protocol::call::put_notify, win, rank, offset,
                                                 size, buffer, &target);
  device::block_copy(destination, buffer, static_cast<std::uint64_t>(size));
  __syncthreads();
  device::signal_device_rank(gst, target, tag);
}

__device__ inline void dcuda_notify(dcuda_state& gst, int rank, dcuda_comm comm, int tag) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::notify);
  device::check_comm(gst, protocol::call::notify, comm);
  device::check_tag(gst, protocol::call::notify, tag);
  device::check_rank(gst, protocol::call::notify, comm, rank);
  device::signal_device_rank(gst, device::device_rank_of(gst, comm, rank), tag);
}

__device__ inline void dcuda_win_flush(dcuda_state& gst, dcuda_win win) {
  using namespace dcuda;
  device::enter_collective(gst.ctx, protocol::call::win_flush);
  device::checked_window_slot(gst, protocol::call::win_flush, win);
}
