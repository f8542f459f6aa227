// Copy by all threads of a block (thesis 4.5): coalesced, as wide as the two pointers' common
// alignment allows (protocol/copy_plan.h), four vectors in flight per thread before the first
// store. Nothing is copied when source and destination coincide (overlapping windows).
#pragma once

#include <cstdint>

#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/protocol/copy_plan.h"

namespace dcuda::device {

// How a copy reads its source. A put's source is the rank's own data, which its entry barrier
// has made visible to the block: plain loads, which L1 may serve. A get's source is memory other
// ranks and GPUs change, which a line left in L1 by an earlier get would hide: relaxed
// system-scope loads, which L1 never serves (memory_order.cuh).
struct plain_loads {
  template <typename Value>
  __device__ static Value load(const Value* p) {
    return *p;
  }
};
struct fresh_loads {
  template <typename Value>
  __device__ static Value load(const Value* p) {
    return load_relaxed_sys(p);
  }
};

template <typename Loads, typename Vector>
__device__ inline void copy_vectors(Vector* dst, const Vector* src, std::uint64_t count) {
  const std::uint64_t stride = blockDim.x;
  std::uint64_t i = threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    const Vector a = Loads::load(src + i);
    const Vector b = Loads::load(src + i + stride);
    const Vector c = Loads::load(src + i + 2 * stride);
    const Vector d = Loads::load(src + i + 3 * stride);
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < count; i += stride) dst[i] = Loads::load(src + i);
}

template <typename Loads>
__device__ inline void copy_bytes(char* dst, const char* src, std::uint64_t count) {
  const auto* from = reinterpret_cast<const std::uint8_t*>(src);
  for (std::uint64_t i = threadIdx.x; i < count; i += blockDim.x) {
    dst[i] = static_cast<char>(Loads::load(from + i));
  }
}

// One `Value`: one load and one store.
template <typename Loads, typename Value>
__device__ inline void copy_value(char* d, const char* s) {
  *reinterpret_cast<Value*>(d) = Loads::load(reinterpret_cast<const Value*>(s));
}

// A few bytes by one thread, in the widest units the two pointers' common alignment allows (a
// 4-byte put is one store).
template <typename Loads = plain_loads>
__device__ inline void thread_copy(void* dst, const void* src, int size) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const auto alignment = reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(s);
  // The 4-byte message of the latency benchmarks and of most notifications with a value: one
  // load and one store, without the loops' bounds and branches in between.
  if (size == 4 && alignment % 4 == 0) {
    copy_value<Loads, std::uint32_t>(d, s);
    return;
  }
  // Any other scalar (1, 2, 8 or 16 bytes, both ends aligned to it) likewise: through the loops
  // below, one took 0.12-0.18 us longer one way than 4 bytes (docs/performance.md).
  const bool scalar = (size == 1) | (size == 2 && alignment % 2 == 0) |
                      (size == 8 && alignment % 8 == 0) | (size == 16 && alignment % 16 == 0);
  if (scalar) {
    switch (size) {
      case 1:
        copy_value<Loads, std::uint8_t>(d, s);
        return;
      case 2:
        copy_value<Loads, std::uint16_t>(d, s);
        return;
      case 8:
        copy_value<Loads, std::uint64_t>(d, s);
        return;
      default:
        copy_value<Loads, uint4>(d, s);
        return;
    }
  }
  int at = 0;
  if (alignment % 8 == 0) {
    for (; at + 8 <= size; at += 8) {
      *reinterpret_cast<std::uint64_t*>(d + at) =
          Loads::load(reinterpret_cast<const std::uint64_t*>(s + at));
    }
  }
  if (alignment % 4 == 0) {
    for (; at + 4 <= size; at += 4) {
      *reinterpret_cast<std::uint32_t*>(d + at) =
          Loads::load(reinterpret_cast<const std::uint32_t*>(s + at));
    }
  }
  for (; at < size; ++at) {
    d[at] = static_cast<char>(Loads::load(reinterpret_cast<const std::uint8_t*>(s + at)));
  }
}

// Up to this many bytes, one byte per thread beats 16-byte vectors by fewer threads (2 ranks on
// one H200, 32-256 B: 1.26 against 1.30 us one way); from 512 B the vectors win (1.28 against
// 1.56 us locally, 2.27 against 2.53 us at 1 KiB over NVLink).
inline constexpr std::uint64_t byte_per_thread_copy_limit = 256;

// Called by all threads of the block; returns before other threads may have finished their part.
template <typename Loads = plain_loads>
__device__ inline void block_copy(void* dst, const void* src, std::uint64_t size) {
  if (dst == src || size == 0) return;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // A message of one 16-byte vector per thread at most, both ends and the size aligned to 16:
  // one vector each, without the plan and its loops (which took 0.26 us longer at 1 KiB).
  const auto alignment = reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(s) |
                         static_cast<std::uintptr_t>(size);
  if (alignment % 16 == 0 && size > byte_per_thread_copy_limit && size <= 16u * blockDim.x) {
    if (threadIdx.x < static_cast<std::uint32_t>(size) / 16u) {
      reinterpret_cast<uint4*>(d)[threadIdx.x] =
          Loads::load(reinterpret_cast<const uint4*>(s) + threadIdx.x);
    }
    return;
  }
  // Small messages (the latency case): one byte per thread, no plan; a warp's bytes are one
  // coalesced access either way.
  if (size <= blockDim.x) {
    if (threadIdx.x < size) {
      d[threadIdx.x] =
          static_cast<char>(Loads::load(reinterpret_cast<const std::uint8_t*>(s) + threadIdx.x));
    }
    return;
  }
  const protocol::copy_plan plan = protocol::plan_copy(reinterpret_cast<std::uint64_t>(s),
                                                       reinterpret_cast<std::uint64_t>(d), size);
  copy_bytes<Loads>(d, s, plan.head_bytes);
  d += plan.head_bytes;
  s += plan.head_bytes;
  switch (plan.vector_bytes) {
    case 16:
      copy_vectors<Loads>(reinterpret_cast<uint4*>(d), reinterpret_cast<const uint4*>(s),
                          plan.vectors);
      break;
    case 8:
      copy_vectors<Loads>(reinterpret_cast<uint2*>(d), reinterpret_cast<const uint2*>(s),
                          plan.vectors);
      break;
    case 4:
      copy_vectors<Loads>(reinterpret_cast<std::uint32_t*>(d),
                          reinterpret_cast<const std::uint32_t*>(s), plan.vectors);
      break;
    default:
      copy_bytes<Loads>(d, s, plan.vectors);
      break;
  }
  const std::uint64_t body = plan.vectors * plan.vector_bytes;
  copy_bytes<Loads>(d + body, s + body, plan.tail_bytes);
}

}  // namespace dcuda::device
