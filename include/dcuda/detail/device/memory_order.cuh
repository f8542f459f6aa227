// Every inline-PTX memory-ordering primitive of the device code, each named after the one
// instruction it issues: the operation, its order (relaxed, acquire, release, acq_rel) and its
// scope (gpu: the ranks and the delivery agent of this GPU; sys: other GPUs of the node and the
// host). The code shared with the host (detail/protocol) orders through cuda::atomic_ref instead;
// these are the places where the device needs an instruction cuda::atomic_ref does not give: a
// 16-byte access, a reduction (no result to wait for), a fence without a store, and the one-way
// fences (fence.acquire, fence.release: PTX ISA 8.6, sm_90).
//
// Each asm is volatile with a "memory" clobber, so the compiler neither drops nor moves it, nor
// moves other memory accesses across it; the ordering among threads is the instruction's own.
#pragma once

#include <cstdint>

namespace dcuda::device {

// ---- loads ----

// Relaxed, system scope: a word another GPU of the node writes (a ring position it has taken, a
// leader's word on this GPU's board). Orders nothing else: where the word publishes data (a board
// word), the caller acquires with fence_acquire_sys once it shows what the caller waits for.
__device__ inline std::uint32_t load_relaxed_sys_u32(const std::uint32_t* word) {
  std::uint32_t value;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(word) : "memory");
  return value;
}
__device__ inline std::uint64_t load_relaxed_sys_u64(const std::uint64_t* word) {
  std::uint64_t value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(word) : "memory");
  return value;
}

// Relaxed, system scope, 16 bytes in one access (a peer ring record, both of its words): the
// polling load of a ring's head. An acquire load would invalidate the L1 cache on every poll.
__device__ inline void load_relaxed_sys_v2_u64(const void* address, std::uint64_t& first,
                                               std::uint64_t& second) {
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(first), "=l"(second)
               : "l"(address)
               : "memory");
}

// Relaxed, system scope, through a generic address, in each width a copy reads: the loads of a
// get. A strong load at system scope is never served from this SM's L1, so a get sees what the
// target's memory holds now, without the acquire fence that would empty L1 for every later load
// of the rank (its table reads included). Orders nothing else.
__device__ inline std::uint8_t load_relaxed_sys(const std::uint8_t* p) {
  std::uint16_t value;
  asm volatile("ld.relaxed.sys.u8 %0, [%1];" : "=h"(value) : "l"(p) : "memory");
  return static_cast<std::uint8_t>(value);
}
__device__ inline std::uint16_t load_relaxed_sys(const std::uint16_t* p) {
  std::uint16_t value;
  asm volatile("ld.relaxed.sys.u16 %0, [%1];" : "=h"(value) : "l"(p) : "memory");
  return value;
}
__device__ inline std::uint32_t load_relaxed_sys(const std::uint32_t* p) {
  std::uint32_t value;
  asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(value) : "l"(p) : "memory");
  return value;
}
__device__ inline std::uint64_t load_relaxed_sys(const std::uint64_t* p) {
  std::uint64_t value;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(value) : "l"(p) : "memory");
  return value;
}
__device__ inline uint2 load_relaxed_sys(const uint2* p) {
  uint2 value;
  asm volatile("ld.relaxed.sys.v2.u32 {%0, %1}, [%2];"
               : "=r"(value.x), "=r"(value.y)
               : "l"(p)
               : "memory");
  return value;
}
__device__ inline uint4 load_relaxed_sys(const uint4* p) {
  uint4 value;
  asm volatile("ld.relaxed.sys.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
               : "l"(p)
               : "memory");
  return value;
}

// Relaxed, gpu scope: a word the ranks of this GPU change with atomics (a peer ring's tail),
// read without taking part (whether the target has taken every ticket handed out).
__device__ inline std::uint32_t load_relaxed_gpu_u32(const std::uint32_t* word) {
  std::uint32_t value;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(word) : "memory");
  return value;
}

// ---- stores ----

// Relaxed, system scope: a word read by another GPU of the node (how far this rank has taken a
// sender's ring). Publishes no data: the sender only learns that the slot is free again.
__device__ inline void store_relaxed_sys_u32(std::uint32_t* word, std::uint32_t value) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(word), "r"(value) : "memory");
}

// Relaxed, system scope: a leader's word on another GPU's board. Ordered after what it announces
// by the fence_release_sys its caller issues first (one fence for all the peers' stores).
__device__ inline void store_relaxed_sys_u64(std::uint64_t* word, std::uint64_t value) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
}

// Relaxed, system scope, 16 bytes in one access: a peer ring record, or two stamped words of a
// compact command-channel entry. The reader checks the record's ticket (each word's stamp), so a
// record is either seen whole or not at all; data it follows is ordered by a fence_release_sys
// before it (peer rings), or carried in it.
__device__ inline void store_relaxed_sys_v2_u64(void* address, std::uint64_t first,
                                                std::uint64_t second) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(address), "l"(first),
               "l"(second)
               : "memory");
}

// ---- read-modify-writes ----

// Relaxed, gpu scope: the counter's value before the add. Takes a ticket (a peer ring's tail, the
// command channel's next entry); the ticket orders nothing, the record or entry written with it
// publishes itself.
__device__ inline std::uint32_t atomic_add_relaxed_gpu_u32(std::uint32_t* counter,
                                                           std::uint32_t value) {
  std::uint32_t old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(counter), "r"(value)
               : "memory");
  return old;
}

// Release, gpu scope, adds 1 and returns nothing (a reduction: the caller does not wait for an
// answer). Counts a notification at a rank of this GPU. Cumulative: covers the stores of every
// thread that a block barrier ordered before the calling thread. Pairs with the target's acquire
// load of the counter (dcuda_test_notifications, dcuda_wait_notifications).
__device__ inline void red_release_gpu_increment_u32(std::uint32_t* counter) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}

// Relaxed, system scope, adds 1 and returns nothing: counts a notification at a rank of another
// GPU of the node (its ring's counter of the tag, protocol/peer_ring.h). Ordered after the data it
// announces by the fence_release_sys its caller issues first; the target acquires with
// fence_acquire_sys once its relaxed reads of the counter show the count.
__device__ inline void red_relaxed_sys_increment_u32(std::uint32_t* counter) {
  asm volatile("red.relaxed.sys.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}

// ---- fences ----
//
// One-way fences. On sm_90 a release fence is MEMBAR.SYS, which waits until this thread's earlier
// stores have reached their memory (over NVLink, a round trip) and costs about 0.5 us even with
// nothing outstanding; an acquire fence only invalidates the L1 cache (CCTL.IVALL), with no load
// and no wait. fence.acq_rel is both, so it is used only where the one-way fences do not exist:
// PTX gives .acquire and .release fences to sm_90 and newer, and for older GPUs each falls back
// to fence.acq_rel, which is stronger.

// Release fence, system scope, before a relaxed store that other GPUs read (a fenced ring record,
// a board word): what this thread did, and what a barrier ordered before it (release is
// cumulative), is visible to whoever observes the store and then acquires.
__device__ inline void fence_release_sys() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  asm volatile("fence.acq_rel.sys;" ::: "memory");
#else
  asm volatile("fence.release.sys;" ::: "memory");
#endif
}

// Acquire fence, system scope, after a relaxed load that showed what the caller waits for (a
// fenced ring record, a board word) written by another GPU: what that GPU released before the
// value this thread read is visible to this thread and, through a block barrier that follows, to
// the block. The PTX acquire pattern of a strong read followed by an acquire fence: it replaces a
// second load, with acquire, of the same word, a dependent memory latency on the path of the
// notified data. (The notification counters keep their acquire load: notification_wait.cuh.)
__device__ inline void fence_acquire_sys() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  asm volatile("fence.acq_rel.sys;" ::: "memory");
#else
  asm volatile("fence.acquire.sys;" ::: "memory");
#endif
}

// ---- launch order ----

// Programmatic dependent launch (sm_90): a kernel launched with programmatic stream
// serialization may start while the kernel ahead of it on its stream still runs. This wait holds
// the calling thread until every grid it depends on has completed and its memory operations are
// visible to it, as stream order would have made them at the kernel's start; nothing the kernel
// reads or writes may come before it. In a kernel launched without the attribute it returns at
// once. Older GPUs have no early launch: nothing to wait for.
__device__ inline void wait_for_prerequisite_grids() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the kernel after this one on the stream, if it was launched with programmatic stream
// serialization, start its blocks now instead of when this kernel ends. Orders no memory: that
// kernel's wait_for_prerequisite_grids still waits for this whole grid and its writes.
__device__ inline void allow_dependent_launch() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace dcuda::device
