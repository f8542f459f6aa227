// Reference of local_latency: the hand-written minimum of a notified access between two blocks
// of one plain CUDA kernel. The sending block copies the payload into the other block's buffer
// with all its threads and synchronises; its thread 0 publishes a message counter with a
// device-scope release store. Thread 0 of the other block polls the counter with acquire loads,
// then releases its block with __syncthreads, as dcuda_wait_notifications does. The remaining
// blocks poll a "done" word the way idle dcuda ranks poll their barrier, so the run with many
// blocks loads the memory system as the dcuda run with as many ranks does.
//
// Where the flags lie moves the result by a third: on one H200 the same two blocks took 0.65 to
// 0.93 us one way depending on the flag's address, and a dcuda rank's notify 0.77 or 0.97 us
// depending on where its counters were allocated (bench/probes/local_placement_probe.cu,
// docs/performance.md). So the reference can also run through given words and buffers: the
// counters and windows dcuda's ranks used in the same run (flag_placement).
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/cuda_check.h"
#include "common/payload.cuh"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

// Where the reference's words and buffers lie: its own allocation (all null), or given ones.
struct flag_placement {
  unsigned* to_block1 = nullptr;  // the word block 0 stores and block 1 polls
  unsigned* to_block0 = nullptr;
  unsigned char* buffers = nullptr;  // as flag_ping_pong_args::buffers, at least 4 * size bytes
};

struct flag_ping_pong_args {
  unsigned* to_block1;     // the flag block 1 polls
  unsigned* to_block0;     // the flag block 0 polls
  unsigned* done;          // the word the idle blocks poll
  unsigned char* buffers;  // block b owns [send: size][receive: size] at b * 2 * size
  int size;                // payload bytes of a message (0: the flag alone)
  int warmup;              // round trips before the first timed repetition
  int iterations;          // round trips per repetition
  int repetitions;
  unsigned long long* repetition_ns;  // [repetitions], measured by block 0
  int* mismatches;                    // blocks whose received bytes were wrong
};

namespace flag_ping_pong_detail {

inline constexpr int flag_stride = 32;  // words: one 128-byte line per flag

using device_flag = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

__device__ inline void wait_until(unsigned* word, unsigned value) {
  while (device_flag(*word).load(cuda::memory_order_acquire) != value) {
  }
}

// A block copy as a careful hand-written kernel makes it: 16-byte vectors where both pointers
// and the size allow (else bytes), four loads in flight per thread before the first store.
__device__ inline void copy_block(unsigned char* dst, const unsigned char* src, int size) {
  const auto bits = reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) |
                    static_cast<std::uintptr_t>(size);
  const int stride = static_cast<int>(blockDim.x);
  int i = static_cast<int>(threadIdx.x);
  if (bits % 16 != 0) {
    for (; i < size; i += stride) dst[i] = src[i];
    return;
  }
  auto* d = reinterpret_cast<uint4*>(dst);
  const auto* s = reinterpret_cast<const uint4*>(src);
  const int vectors = size / 16;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    const uint4 v0 = s[i];
    const uint4 v1 = s[i + stride];
    const uint4 v2 = s[i + 2 * stride];
    const uint4 v3 = s[i + 3 * stride];
    d[i] = v0;
    d[i + stride] = v1;
    d[i + 2 * stride] = v2;
    d[i + 3 * stride] = v3;
  }
  for (; i < vectors; i += stride) d[i] = s[i];
}

// The payload, then the counter: __syncthreads orders every thread's stores before thread 0's
// release store.
__device__ inline void send(unsigned char* destination, const unsigned char* source, int size,
                            unsigned* flag, unsigned message) {
  copy_block(destination, source, size);
  __syncthreads();
  if (threadIdx.x == 0) device_flag(*flag).store(message, cuda::memory_order_release);
}

__device__ inline void receive(unsigned* flag, unsigned message) {
  if (threadIdx.x == 0) wait_until(flag, message);
  __syncthreads();
}

}  // namespace flag_ping_pong_detail

__global__ void flag_ping_pong_kernel(flag_ping_pong_args args) {
  using namespace flag_ping_pong_detail;
  unsigned* to_block1 = args.to_block1;
  unsigned* to_block0 = args.to_block0;
  unsigned* done = args.done;
  const int block = static_cast<int>(blockIdx.x);
  if (block >= 2) {
    if (threadIdx.x == 0) wait_until(done, 1u);
    __syncthreads();
    return;
  }

  const int other = 1 - block;
  unsigned char* mine = args.buffers + static_cast<std::size_t>(block) * 2 * args.size;
  unsigned char* others_receive =
      args.buffers + static_cast<std::size_t>(other) * 2 * args.size + args.size;
  fill_payload(mine, static_cast<std::uint64_t>(args.size), block);

  unsigned message = 0;
  for (int repetition = -1; repetition < args.repetitions; ++repetition) {
    const int round_trips = repetition < 0 ? args.warmup : args.iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < round_trips; ++i) {
      ++message;
      if (block == 0) {
        send(others_receive, mine, args.size, to_block1, message);
        receive(to_block0, message);
      } else {
        receive(to_block1, message);
        send(others_receive, mine, args.size, to_block0, message);
      }
    }
    if (block == 0 && threadIdx.x == 0 && repetition >= 0) {
      args.repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }

  if (!block_holds_payload(mine + args.size, static_cast<std::uint64_t>(args.size), other) &&
      threadIdx.x == 0) {
    atomicAdd(args.mismatches, 1);
  }
  if (block == 0 && threadIdx.x == 0) device_flag(*done).store(1u, cuda::memory_order_release);
}

// Blocks of `threads_per_block` threads of the reference kernel that fit on the GPU at once
// (every block must be resident: they wait for each other).
inline int flag_ping_pong_max_blocks(int threads_per_block) {
  int device = 0;
  BENCH_CUDA_CHECK(cudaGetDevice(&device));
  int multiprocessors = 0;
  BENCH_CUDA_CHECK(
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  int per_multiprocessor = 0;
  BENCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_multiprocessor, reinterpret_cast<const void*>(&flag_ping_pong_kernel), threads_per_block,
      0));
  return per_multiprocessor * multiprocessors;
}

struct ping_pong_result {
  double one_way_us;  // median over the repetitions of round trip / 2
  bool data_arrived;
};

// Runs the reference once: `blocks` resident blocks (launched cooperatively, so an oversized
// grid is an error instead of a hang), `size` bytes per message, its flags and buffers where
// `placement` says (its own allocation where it gives none).
inline ping_pong_result run_flag_ping_pong(int blocks, int threads_per_block, int size, int warmup,
                                           int iterations, const flag_placement& placement = {}) {
  using flag_ping_pong_detail::flag_stride;
  device_bytes flags(3 * flag_stride * sizeof(unsigned));
  device_bytes buffers(placement.buffers != nullptr
                           ? 0
                           : static_cast<std::size_t>(4) * static_cast<std::size_t>(size));
  device_bytes repetition_ns(repetitions * sizeof(unsigned long long));
  device_bytes mismatches(sizeof(int));
  unsigned* own_flags = flags.get<unsigned>();
  unsigned* to_block1 = placement.to_block1 != nullptr ? placement.to_block1 : own_flags;
  unsigned* to_block0 =
      placement.to_block0 != nullptr ? placement.to_block0 : own_flags + flag_stride;
  unsigned char* payloads = placement.buffers != nullptr ? placement.buffers : buffers.get();
  BENCH_CUDA_CHECK(cudaMemset(flags.get(), 0, flags.size()));
  BENCH_CUDA_CHECK(cudaMemset(to_block1, 0, sizeof(unsigned)));
  BENCH_CUDA_CHECK(cudaMemset(to_block0, 0, sizeof(unsigned)));
  BENCH_CUDA_CHECK(cudaMemset(payloads, 0, static_cast<std::size_t>(4) * size));
  BENCH_CUDA_CHECK(cudaMemset(mismatches.get(), 0, mismatches.size()));

  flag_ping_pong_args args{to_block1,
                           to_block0,
                           own_flags + 2 * flag_stride,
                           payloads,
                           size,
                           warmup,
                           iterations,
                           repetitions,
                           repetition_ns.get<unsigned long long>(),
                           mismatches.get<int>()};
  void* parameters[] = {&args};
  BENCH_CUDA_CHECK(cudaLaunchCooperativeKernel(
      reinterpret_cast<const void*>(&flag_ping_pong_kernel), dim3(static_cast<unsigned>(blocks)),
      dim3(static_cast<unsigned>(threads_per_block)), parameters, 0, nullptr));
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<unsigned long long> nanoseconds(repetitions);
  int wrong = 0;
  BENCH_CUDA_CHECK(cudaMemcpy(nanoseconds.data(), repetition_ns.get(), repetition_ns.size(),
                              cudaMemcpyDeviceToHost));
  BENCH_CUDA_CHECK(cudaMemcpy(&wrong, mismatches.get(), sizeof wrong, cudaMemcpyDeviceToHost));
  return {median_one_way_us(nanoseconds, iterations), wrong == 0};
}

}  // namespace dcuda_bench
