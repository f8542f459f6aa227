// Distributed arrays (extension), as DASH's dash::Array over DART: `size` elements of T dealt to
// the ranks of a communicator by a distribution (dcuda/distribution.h: blocked, cyclic or
// block-cyclic), each rank's elements contiguous in its part of one team-aligned window taken
// from the rank heaps. Every rank reaches every element by its global index: a global pointer
// names it (for the atomics too), get reads it, put writes it, get_range reads a range, and
// dcuda::copy fills one array's range from another's; a rank works on its own elements in place
// through local(). Element access by index checks the index: a bad one stops the run with the
// call, the index and the array's size.
//
// The object is a small value (the window, the distribution, the caller's part) that every thread
// of the rank holds after allocate; copying it copies the handle, not the elements. Gets reach the
// ranks of the node (as dcuda_get); puts reach every rank (as dcuda_put).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "dcuda/detail/device/array_checks.cuh"
#include "dcuda/detail/device/window_allocation.cuh"
#include "dcuda/device/global_access.cuh"
#include "dcuda/device/rank.cuh"
#include "dcuda/device/window.cuh"
#include "dcuda/distribution.h"

namespace dcuda {

template <typename T>
class array {
  static_assert(std::is_trivially_copyable_v<T>, "array elements are copied as bytes");
  // A put of one element leaves from the caller's staging slot and must free it on return on
  // every path: the network path carries puts of up to 1 KiB in its command channel.
  static_assert(sizeof(T) <= 1024, "array elements are at most 1 KiB");

 public:
  // (rank), every rank of `comm` in the same order, as dcuda_win_allocate: an array of
  // dealt.size() elements dealt by `dealt`, whose units() must be the size of `comm`. Every
  // rank's part holds dealt.largest_local_size() elements (and one slot for the puts it makes).
  // The elements start uninitialised. Where all window slots are in use the array is not valid().
  __device__ static array allocate(dcuda_state& gst, dcuda_comm comm, distribution dealt) {
    constexpr protocol::call call = protocol::call::array_allocate;
    int members = 0;
    int me = 0;
    dcuda_comm_size(gst, comm, &members);
    dcuda_comm_rank(gst, comm, &me);
    if (threadIdx.x == 0) device::check_distribution(gst, call, dealt, members);
    // Beyond any heap (so refused with heap_exhausted) rather than a product that wraps.
    constexpr std::uint64_t beyond_any_heap = std::uint64_t{1} << 62;
    const std::uint64_t share = dealt.largest_local_size();
    const std::uint64_t part_bytes =
        share < beyond_any_heap / sizeof(T) ? (share + 1) * sizeof(T) : beyond_any_heap;
    void* base = nullptr;
    dcuda_win win = DCUDA_WIN_NONE;
    device::allocate_window(gst, call, comm, part_bytes, &base, &win);
    return array(dealt, win, me, static_cast<T*>(base));
  }

  // (rank), every rank of the team: the window ends and its memory goes back to the heaps.
  __device__ void free(dcuda_state& gst) {
    dcuda_win_free(gst, win_);
    win_ = DCUDA_WIN_NONE;
    local_ = nullptr;
  }

  __device__ bool valid() const { return win_ != DCUDA_WIN_NONE; }
  __device__ std::uint64_t size() const { return layout_.size(); }
  __device__ const distribution& layout() const { return layout_; }
  __device__ dcuda_win window() const { return win_; }

  // The caller's elements, one after another: local()[j] is element global_index(j).
  __device__ T* local() const { return local_; }
  __device__ std::uint64_t local_size() const { return layout_.local_size(unit_); }
  __device__ std::uint64_t global_index(std::uint64_t local) const {
    return layout_.global_of(unit_, local);
  }
  // The caller's rank in the array's team (its communicator).
  __device__ int team_rank() const { return unit_; }
  // Whether element `i` is one of the caller's.
  __device__ bool is_local(std::uint64_t i) const {
    return i < size() && layout_.place_of(i).unit == unit_;
  }

  // (any thread). The global pointer of element `i`: for the atomics (dcuda_atomic_fetch_add and
  // the others on 4- and 8-byte elements), dcuda_get_gptr, dcuda_put_gptr.
  __device__ dcuda_gptr gptr(dcuda_state& gst, std::uint64_t i) const {
    device::check_array_range(gst, protocol::call::array_gptr, i, 1, size());
    return place(i);
  }
  // (any thread). The address at which the caller's threads load and store element `i`: on this
  // GPU or a peer GPU of the node; nullptr for a rank reached through the network.
  __device__ T* address(dcuda_state& gst, std::uint64_t i) const {
    device::check_array_range(gst, protocol::call::array_address, i, 1, size());
    return static_cast<T*>(dcuda_gptr_address(gst, place(i)));
  }

  // (rank). Element `i`, in every thread.
  __device__ T get(dcuda_state& gst, std::uint64_t i) const {
    __shared__ alignas(T) unsigned char fetched[sizeof(T)];
    if (threadIdx.x == 0) device::check_array_range(gst, protocol::call::array_get, i, 1, size());
    dcuda_get_gptr(gst, place(i), static_cast<int>(sizeof(T)), fetched);
    T value;
    memcpy(&value, fetched, sizeof(T));
    __syncthreads();  // `fetched` free for the next get
    return value;
  }

  // (rank). Writes thread 0's `value` into element `i`; complete on return where dcuda_put is
  // (the node), ordered as dcuda_put otherwise (dcuda_win_flush on window() completes it).
  __device__ void put(dcuda_state& gst, std::uint64_t i, const T& value) const {
    T* slot = local_ + layout_.largest_local_size();  // the caller's staging slot
    if (threadIdx.x == 0) {
      device::check_array_range(gst, protocol::call::array_put, i, 1, size());
      memcpy(slot, &value, sizeof(T));
    }
    dcuda_put_gptr(gst, place(i), static_cast<int>(sizeof(T)), slot);
  }

  // (rank). Copies elements [first, first + count) into `buffer` (memory the rank's threads
  // write), a get per run of elements that lie together on one rank.
  __device__ void get_range(dcuda_state& gst, std::uint64_t first, std::uint64_t count,
                            T* buffer) const {
    if (threadIdx.x == 0) {
      device::check_array_range(gst, protocol::call::array_get_range, first, count, size());
    }
    for (std::uint64_t done = 0; done < count;) {
      const std::uint64_t run = device::array_run(layout_, first + done, count - done, sizeof(T));
      dcuda_get_gptr(gst, place(first + done), static_cast<int>(run * sizeof(T)), buffer + done);
      done += run;
    }
  }

 private:
  __device__ array(distribution dealt, dcuda_win window, int unit, T* own)
      : layout_(dealt), win_(window), unit_(unit), local_(own) {}
  __device__ dcuda_gptr place(std::uint64_t i) const {
    const element_place at = layout_.place_of(i);
    return dcuda_gptr{at.unit, win_, at.local * sizeof(T)};
  }

  distribution layout_;
  dcuda_win win_;
  int unit_;  // the caller's rank in the team
  T* local_;
};

// (rank), every rank of `to`'s team: elements [from_first, from_first + count) of `from` into
// [to_first, to_first + count) of `to`. Each rank fetches the destination elements it holds, a
// get per run, so the copy moves every byte once and in parallel over the team. It synchronises
// nothing: the source elements must be complete before it (a barrier after the ranks wrote them),
// and on return only the caller's destination elements are in place (a barrier after the copy
// makes them all visible, and lets the ranks change the source again). The ranges must not
// overlap.
template <typename T>
__device__ void copy(dcuda_state& gst, const array<T>& from, std::uint64_t from_first,
                     std::uint64_t count, array<T>& to, std::uint64_t to_first) {
  if (threadIdx.x == 0) {
    device::check_array_range(gst, protocol::call::array_copy, from_first, count, from.size());
    device::check_array_range(gst, protocol::call::array_copy, to_first, count, to.size());
  }
  const distribution& dealt = to.layout();
  if (dealt.units() == 1) {  // every element is the caller's, one after another
    from.get_range(gst, from_first, count, to.local() + to_first);
    return;
  }
  const std::uint64_t end = to_first + count;
  // The caller's blocks that meet the destination range, from the first: block k is the
  // caller's where k % units is its rank in the team.
  const auto units = static_cast<std::uint64_t>(dealt.units());
  const std::uint64_t first_block = count == 0 ? 0 : to_first / dealt.block();
  const auto mine = static_cast<std::uint64_t>(to.team_rank());
  std::uint64_t k = first_block + (mine + units - first_block % units) % units;
  for (; count != 0 && k * dealt.block() < end; k += units) {
    const std::uint64_t block_first = k * dealt.block();
    const std::uint64_t lo = block_first > to_first ? block_first : to_first;
    const std::uint64_t block_end = block_first + dealt.block();
    const std::uint64_t hi = block_end < end ? block_end : end;
    from.get_range(gst, from_first + (lo - to_first), hi - lo,
                   to.local() + dealt.place_of(lo).local);
  }
}

}  // namespace dcuda
