// The bytes the benchmarks send: a pattern of the sending rank and of the byte's offset, never
// 0. Receive buffers start zeroed, so a receiver that finds the pattern knows that every byte
// arrived, from the right sender, at the right place.
#pragma once

#include <cstdint>

namespace dcuda_bench {

__host__ __device__ inline unsigned char payload_byte(int sender, std::uint64_t offset) {
  return static_cast<unsigned char>(
      (offset * 131u + static_cast<std::uint64_t>(sender) * 71u) % 251u + 1u);
}

// All threads of the block fill buffer[0, bytes) with the sender's pattern.
__device__ inline void fill_payload(unsigned char* buffer, std::uint64_t bytes, int sender) {
  for (std::uint64_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    buffer[i] = payload_byte(sender, i);
  }
  __syncthreads();
}

// All threads of the block: whether buffer[0, bytes) holds the sender's pattern (the same
// answer in every thread).
__device__ inline bool block_holds_payload(const unsigned char* buffer, std::uint64_t bytes,
                                           int sender) {
  int wrong = 0;
  for (std::uint64_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    if (buffer[i] != payload_byte(sender, i)) wrong = 1;
  }
  return __syncthreads_count(wrong) == 0;
}

}  // namespace dcuda_bench
