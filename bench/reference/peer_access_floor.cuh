// Reference of global_access_latency, and of nvshmem_latency's get and fetch-add tables: the
// hand-written minimum of a get and of a remote atomic between two GPUs of one node, through
// memory mapped with CUDA IPC. One block of process 0's GPU, back to back:
//   get        the block copies `size` bytes of the other GPU's buffer into its own GPU's memory
//              with loads that skip the L1 cache (__ldcv: each get reads the other GPU again), by
//              thread 0 alone up to 16 bytes, then __syncthreads; get i reads at
//              get_offset(i, size), so that successive gets read other lines of a region larger
//              than L1, as gets of real data do (the same offsets as the benchmarks' gets)
//   fetch-add  thread 0 adds 1 to a 64-bit word of the other GPU (a relaxed system-scope
//              cuda::atomic_ref fetch_add), then __syncthreads (the value reaches the block)
// Time per operation: the repetition's time over its operations, the median of 7 repetitions,
// timed with the GPU's global timer. Process 1's GPU takes no part (its memory is the target).
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/cuda_check.h"
#include "common/ipc_buffer.h"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

// The bytes the gets of a latency benchmark cycle through: more than a multiprocessor's L1
// holds (256 KiB on Hopper), so that no get finds the lines of an earlier one in L1.
inline constexpr std::size_t get_region_bytes = std::size_t{4} << 20;

// Where get `i` of `size` bytes reads in the region: the region cut into slots of the size
// (at least a 128-byte line), one after the other.
__host__ __device__ inline std::size_t get_offset(int i, std::size_t size) {
  const std::size_t slot = (size < 128 ? 128 : (size + 127) / 128 * 128);
  const std::size_t slots = get_region_bytes / slot;
  return static_cast<std::size_t>(i) % slots * slot;
}

struct peer_access_args {
  const unsigned char* peer_source;   // the other GPU's bytes, mapped
  unsigned char* landing;             // this GPU
  unsigned long long* peer_word;      // the other GPU's word, mapped
  int size;                           // get: bytes; 0: fetch-add
  int warmup;                         // operations before the first timed repetition
  int iterations;                     // operations per repetition
  unsigned long long* repetition_ns;  // [repetitions]
  unsigned long long* sink;           // the fetch-adds' values, so that none is dropped
};

__global__ void peer_access_floor_kernel(peer_access_args args) {
  unsigned long long seen = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int operations = repetition < 0 ? args.warmup : args.iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < operations; ++i) {
      if (args.size == 0) {
        if (threadIdx.x == 0) {
          seen += cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(*args.peer_word)
                      .fetch_add(1ull, cuda::memory_order_relaxed);
        }
      } else if (args.size <= 16) {
        if (threadIdx.x == 0) {
          auto* to = reinterpret_cast<unsigned long long*>(args.landing);
          const auto* from = reinterpret_cast<const unsigned long long*>(
              args.peer_source + get_offset(i, static_cast<std::size_t>(args.size)));
          for (int word = 0; word < (args.size + 7) / 8; ++word) to[word] = __ldcv(from + word);
        }
      } else {
        auto* to = reinterpret_cast<uint4*>(args.landing);
        const auto* from = reinterpret_cast<const uint4*>(
            args.peer_source + get_offset(i, static_cast<std::size_t>(args.size)));
        for (int v = static_cast<int>(threadIdx.x); v < args.size / 16;
             v += static_cast<int>(blockDim.x)) {
          to[v] = __ldcv(from + v);
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0 && repetition >= 0) {
      args.repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
  if (threadIdx.x == 0) *args.sink = seen;
}

class peer_access_floor {
 public:
  // Collective over the 2 processes of `world` (one node, one GPU each, the current device).
  // Gets of up to `largest` bytes (a multiple of 16 above 16 bytes, at most get_region_bytes).
  peer_access_floor(const mpi_world& world, std::size_t largest)
      : world_(world),
        buffers_(world, get_region_bytes + 256),
        landing_(largest),
        repetition_ns_(repetitions * sizeof(unsigned long long)),
        sink_(sizeof(unsigned long long)) {}

  // Collective: the time of one get of `size` bytes (0: one fetch-add) by a block of `threads`
  // threads of process 0's GPU, microseconds, the median of the repetitions (on both processes).
  figure run(int threads, int size, int warmup, int iterations) {
    world_.check(MPI_Barrier(world_.comm()), "MPI_Barrier");
    figure result{};
    if (world_.process() == 0) {
      const peer_access_args args{
          buffers_.peers(),
          landing_.get(),
          reinterpret_cast<unsigned long long*>(buffers_.peers() + get_region_bytes),
          size,
          warmup,
          iterations,
          repetition_ns_.get<unsigned long long>(),
          sink_.get<unsigned long long>()};
      peer_access_floor_kernel<<<1, static_cast<unsigned>(threads)>>>(args);
      BENCH_CUDA_CHECK(cudaGetLastError());
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<unsigned long long> nanoseconds(repetitions);
      BENCH_CUDA_CHECK(cudaMemcpy(nanoseconds.data(), repetition_ns_.get(),
                                  repetitions * sizeof(unsigned long long),
                                  cudaMemcpyDeviceToHost));
      std::vector<double> per_operation_us;
      for (const unsigned long long ns : nanoseconds) {
        per_operation_us.push_back(static_cast<double>(ns) / iterations / 1000);
      }
      result = summary(per_operation_us);
    }
    world_.check(MPI_Barrier(world_.comm()), "MPI_Barrier");
    return world_.from_process0(result);
  }

 private:
  const mpi_world& world_;
  ipc_buffer_pair buffers_;  // [get region][the fetch-adds' word]
  device_bytes landing_;
  device_bytes repetition_ns_;
  device_bytes sink_;
};

}  // namespace dcuda_bench
