// Every inline-PTX memory-ordering primitive of the device code, each named after the one
// instruction it issues: the operation, its order (relaxed, acquire, release, acq_rel) and its
// scope (gpu: the ranks and the delivery agent of this GPU; sys: other GPUs of the node and the
// host). The code shared with the host (detail/protocol) orders through cuda::atomic_ref instead;
// these are the places where the device needs an instruction cuda::atomic_ref does not give: a
// 16-byte access, a reduction (no result to wait for), a fence without a store.
//
// Each asm is volatile with a "memory" clobber, so the compiler neither drops nor moves it, nor
// moves other memory accesses across it; the ordering among threads is the instruction's own.
#pragma once

#include <cstdint>

namespace dcuda::device {

// ---- loads ----

// Relaxed, system scope: a word another GPU of the node writes (a ring position it has taken, a
// leader's word on this GPU's board). Orders nothing else: a poll, followed by an acquire
// (load_acquire_sys_v2_u64 or fence_acq_rel_sys) once it shows what the caller waits for.
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

// Acquire, system scope, 16 bytes in one access: a fenced peer ring record, read again once it is
// complete. Pairs with the sender's fence_acq_rel_sys before the record (put data before its
// notification): what the sender stored before the fence is visible to this thread after it.
__device__ inline void load_acquire_sys_v2_u64(const void* address, std::uint64_t& first,
                                               std::uint64_t& second) {
  asm volatile("ld.acquire.sys.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(first), "=l"(second)
               : "l"(address)
               : "memory");
}

// ---- stores ----

// Relaxed, system scope: a word read by another GPU of the node (how far this rank has taken a
// sender's ring). Publishes no data: the sender only learns that the slot is free again.
__device__ inline void store_relaxed_sys_u32(std::uint32_t* word, std::uint32_t value) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(word), "r"(value) : "memory");
}

// Relaxed, system scope: a leader's word on another GPU's board. Ordered after what it announces
// by the fence_acq_rel_sys its caller issues first (one fence for all the peers' stores).
__device__ inline void store_relaxed_sys_u64(std::uint64_t* word, std::uint64_t value) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
}

// Relaxed, system scope, 16 bytes in one access: a peer ring record, or two stamped words of a
// compact command-channel entry. The reader checks the record's ticket (each word's stamp), so a
// record is either seen whole or not at all; data it follows is ordered by a fence_acq_rel_sys
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

// ---- fences ----

// Acquire-release fence, system scope. As a release, before a relaxed store that other GPUs read
// (a fenced ring record, a board word): what this thread did, and what a barrier ordered before
// it, is visible to whoever observes the store and acquires. As an acquire, after relaxed polls of
// other GPUs' words (the board): what those GPUs released is visible to this thread.
__device__ inline void fence_acq_rel_sys() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

}  // namespace dcuda::device
