// Global access (extension): global pointers over windows, get, and remote atomics, as the PGAS
// runtimes do (DART under DASH, NVSHMEM). A global pointer (dcuda/global_pointer.h) names a
// window, a rank of its communicator and an offset in that rank's part.
//
// A get and an atomic reach the ranks of this node: the caller reads the target's memory itself,
// on its own GPU or across NVLink on a peer GPU, as a put does. A target reached only through
// the network is refused with an error that names it. Puts through a global pointer take every
// path dcuda_put takes.
//
// Order: a get and an atomic are complete on return. Neither orders anything else: data another
// rank wrote is seen by a get once its notification (or a barrier) has arrived, as for the
// caller's own window; an atomic is relaxed, at system scope, and atomic with respect to the
// atomics of every rank and GPU of the node on the same word.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda/atomic>

#include "dcuda/detail/device/global_access_path.cuh"
#include "dcuda/detail/device/rank_entry.cuh"
#include "dcuda/detail/device/thread_entry.cuh"
#include "dcuda/device/handles.cuh"
#include "dcuda/device/notified_access.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/global_pointer.h"

// (any thread). The global pointer to `offset` in rank `rank`'s part of window `win` (`rank`
// numbered in the window's communicator). Nothing is checked here; the calls that use the pointer
// check it. DCUDA_WIN_NONE gives DCUDA_GPTR_NULL.
__device__ inline dcuda_gptr dcuda_gptr_of(dcuda_win win, int rank, std::uint64_t offset) {
  return win < 0 ? DCUDA_GPTR_NULL : dcuda_gptr{rank, win, offset};
}

// (any thread). `p` moved by `bytes` (negative: backwards) through its window, crossing into the
// next or the previous rank's part at the end of one: the window is treated as its ranks' parts
// laid end to end, which needs every rank it crosses to expose the same size (the call fails
// otherwise, naming the rank). The window must be one the caller holds.
__device__ inline dcuda_gptr dcuda_gptr_add(dcuda_state& gst, dcuda_gptr p, std::int64_t bytes) {
  return dcuda::device::checked_gptr_advance(gst, p, bytes);
}

// (any thread). Whether the bytes `p` names are the caller's own (its part of the window).
__device__ inline bool dcuda_gptr_is_local(dcuda_state& gst, dcuda_gptr p) {
  const dcuda::device::gptr_destination to = dcuda::device::find_gptr_destination(gst, p);
  return to.found && to.world_rank == gst.world_rank;
}

// (any thread). The address at which the caller's threads may load and store the byte `p`
// names: on this GPU, or on a peer GPU of the node through NVLink. nullptr where there is none:
// a rank reached through the network, a window the caller does not hold, a rank outside the
// window's communicator, or an offset past the rank's part. Plain loads and stores through it
// order nothing: a notification or a barrier does.
__device__ inline void* dcuda_gptr_address(dcuda_state& gst, dcuda_gptr p) {
  using namespace dcuda;
  const device::gptr_destination to = device::find_gptr_destination(gst, p);
  if (!to.found) return nullptr;
  const protocol::window_entry entry = device::window_of(gst, to.slot, to.world_rank);
  const protocol::route path = device::route_to(gst, to.world_rank).path;
  if (entry.generation != protocol::window_generation(p.window) || p.offset >= entry.size ||
      (path != protocol::route::local && path != protocol::route::peer)) {
    return nullptr;
  }
  return reinterpret_cast<void*>(entry.base + p.offset);
}

// (rank). Copies `size` bytes from `offset` in rank `rank`'s part of window `win` to `buffer`
// (any memory the caller's threads may write). Complete on return.
__device__ inline void dcuda_get(dcuda_state& gst, dcuda_win win, int rank, int offset, int size,
                                 void* buffer) {
  // A negative offset converts to 2^64 - |offset|, which the range check reads back as negative.
  dcuda::device::get(gst, dcuda_gptr{rank, win, static_cast<std::uint64_t>(offset)}, size, buffer);
}

// (rank). dcuda_get from the bytes `from` names.
__device__ inline void dcuda_get_gptr(dcuda_state& gst, dcuda_gptr from, int size, void* buffer) {
  dcuda::device::get(gst, from, size, buffer);
}

// (rank). dcuda_put to the bytes `to` names: `buffer` inside the caller's own part of the same
// window, as for dcuda_put; every path dcuda_put takes.
__device__ inline void dcuda_put_gptr(dcuda_state& gst, dcuda_gptr to, int size, void* buffer) {
  using namespace dcuda;
  constexpr protocol::call call = protocol::call::put_gptr;
  device::held_ticket ticket{};
  if (threadIdx.x == 0) {
    const int offset = device::put_offset_of(gst, call, to, size);
    ticket = device::plan_put(gst, call, to.window, to.unit, offset, size, buffer, false, 0);
  }
  device::enter_rank_call(gst.ctx, call);
  device::put_along(gst, call, to.window, static_cast<int>(to.offset), size, buffer, false, 0,
                    ticket);
}

// (rank). dcuda_put_notify to the bytes `to` names, with `tag`.
__device__ inline void dcuda_put_notify_gptr(dcuda_state& gst, dcuda_gptr to, int size,
                                             void* buffer, int tag) {
  using namespace dcuda;
  constexpr protocol::call call = protocol::call::put_notify_gptr;
  device::held_ticket ticket{};
  if (threadIdx.x == 0) {
    const int offset = device::put_offset_of(gst, call, to, size);
    ticket = device::plan_put(gst, call, to.window, to.unit, offset, size, buffer, true, tag);
  }
  device::enter_rank_call(gst.ctx, call);
  device::put_along(gst, call, to.window, static_cast<int>(to.offset), size, buffer, true, tag,
                    ticket);
}

namespace dcuda::device {

// The word types the remote atomics take: 32- and 64-bit integers.
template <typename T>
inline constexpr bool atomic_word =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && (sizeof(T) == 4 || sizeof(T) == 8);

// A remote atomic, thread 0 alone: `operation(atomic_ref)` on the word `target` names, at system
// scope (a peer GPU's word, and one the host or another GPU may change too), its result given to
// every thread. Thread 0 finds the word before the entry barrier (the checks overlap the wait
// for the other threads) and makes the atomic after it: a rank call sees what the rank's threads
// did before it, and a thread's plain store to the same word just before the call must not land
// after the atomic. The result passes through shared memory behind a second barrier; thread 0
// writes it only after the next atomic's entry barrier, when no thread reads the old one.
template <typename T, typename Operation>
__device__ inline T rank_atomic(dcuda_state& gst, protocol::call call, dcuda_gptr target,
                                Operation operation) {
  static_assert(atomic_word<T>, "remote atomics take 32- and 64-bit integers");
  __shared__ T result;
  T* word = nullptr;
  if (threadIdx.x == 0) {
    word = reinterpret_cast<T*>(atomic_word_address(gst, call, target, sizeof(T)));
  }
  enter_rank_call(gst.ctx, call);
  if (threadIdx.x == 0) result = operation(cuda::atomic_ref<T, cuda::thread_scope_system>(*word));
  __syncthreads();
  return result;
}

// The same atomic by thread 0 alone, with no block barrier (a thread-scoped call, as
// dcuda/device/thread_calls.cuh): the result is thread 0's. What the rank's other threads stored
// before it reaches the word first only where a block barrier thread 0 passed orders it.
template <typename T, typename Operation>
__device__ inline T thread_atomic(dcuda_state& gst, protocol::call call, dcuda_gptr target,
                                  Operation operation) {
  static_assert(atomic_word<T>, "remote atomics take 32- and 64-bit integers");
  enter_thread_call(gst, call);
  T* word = reinterpret_cast<T*>(atomic_word_address(gst, call, target, sizeof(T)));
  return operation(cuda::atomic_ref<T, cuda::thread_scope_system>(*word));
}

template <typename T>
__device__ inline T fetch_add_relaxed(cuda::atomic_ref<T, cuda::thread_scope_system> word,
                                      T value) {
  return word.fetch_add(value, cuda::memory_order_relaxed);
}
template <typename T>
__device__ inline T compare_swap_relaxed(cuda::atomic_ref<T, cuda::thread_scope_system> word,
                                         T expected, T desired) {
  word.compare_exchange_strong(expected, desired, cuda::memory_order_relaxed);
  return expected;  // what the word held: `expected` unchanged where the swap was made
}
template <typename T>
__device__ inline T swap_relaxed(cuda::atomic_ref<T, cuda::thread_scope_system> word, T value) {
  return word.exchange(value, cuda::memory_order_relaxed);
}

}  // namespace dcuda::device

// (rank). Adds `value` to the word `target` names and returns what it held before, to every
// thread. T: a 32- or 64-bit integer; the offset a multiple of its size.
template <typename T>
__device__ inline T dcuda_atomic_fetch_add(dcuda_state& gst, dcuda_gptr target, T value) {
  return dcuda::device::rank_atomic<T>(
      gst, dcuda::protocol::call::atomic_fetch_add, target,
      [value](auto word) { return dcuda::device::fetch_add_relaxed<T>(word, value); });
}

// (rank). Replaces the word `target` names with `desired` where it holds `expected`; returns what
// it held before (equal to `expected` when the swap was made), to every thread.
template <typename T>
__device__ inline T dcuda_atomic_compare_swap(dcuda_state& gst, dcuda_gptr target, T expected,
                                              T desired) {
  return dcuda::device::rank_atomic<T>(
      gst, dcuda::protocol::call::atomic_compare_swap, target, [expected, desired](auto word) {
        return dcuda::device::compare_swap_relaxed<T>(word, expected, desired);
      });
}

// (rank). Replaces the word `target` names with `value`; returns what it held before.
template <typename T>
__device__ inline T dcuda_atomic_swap(dcuda_state& gst, dcuda_gptr target, T value) {
  return dcuda::device::rank_atomic<T>(
      gst, dcuda::protocol::call::atomic_swap, target,
      [value](auto word) { return dcuda::device::swap_relaxed<T>(word, value); });
}

// (thread 0). dcuda_atomic_fetch_add by thread 0 alone, with no block barrier of its own (a
// thread-scoped call, dcuda/device/thread_calls.cuh); the result is thread 0's.
template <typename T>
__device__ inline T dcuda_atomic_fetch_add_thread(dcuda_state& gst, dcuda_gptr target, T value) {
  return dcuda::device::thread_atomic<T>(
      gst, dcuda::protocol::call::atomic_fetch_add_thread, target,
      [value](auto word) { return dcuda::device::fetch_add_relaxed<T>(word, value); });
}

// (thread 0). dcuda_atomic_compare_swap by thread 0 alone.
template <typename T>
__device__ inline T dcuda_atomic_compare_swap_thread(dcuda_state& gst, dcuda_gptr target,
                                                     T expected, T desired) {
  return dcuda::device::thread_atomic<T>(gst, dcuda::protocol::call::atomic_compare_swap_thread,
                                         target, [expected, desired](auto word) {
                                           return dcuda::device::compare_swap_relaxed<T>(
                                               word, expected, desired);
                                         });
}

// (thread 0). dcuda_atomic_swap by thread 0 alone.
template <typename T>
__device__ inline T dcuda_atomic_swap_thread(dcuda_state& gst, dcuda_gptr target, T value) {
  return dcuda::device::thread_atomic<T>(
      gst, dcuda::protocol::call::atomic_swap_thread, target,
      [value](auto word) { return dcuda::device::swap_relaxed<T>(word, value); });
}
