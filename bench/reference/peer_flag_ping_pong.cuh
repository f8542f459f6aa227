// Reference of remote_latency (peer path): the hand-written minimum of a notified access between
// two GPUs of one node, one block on each, through memory mapped with CUDA IPC (measured:
// 1.19 us one way for a bare flag on 2 H200s). The sending block copies the payload
// into the other GPU's receive buffer with peer stores by all its threads (the copy of
// flag_ping_pong.cuh: 16-byte vectors where aligned), synchronises, and its thread 0 publishes a
// message counter in the other GPU's memory with a system-scope release store. Thread 0 of the
// receiving block polls its own counter with relaxed system-scope loads, ends with one acquire
// load, then releases its block with __syncthreads, as dcuda_wait_notifications does.
//
// Each process runs a one-block kernel on its own GPU; process 0 sends first and times.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/cuda_check.h"
#include "common/ipc_buffer.h"
#include "common/mpi_world.h"
#include "common/payload.cuh"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"
#include "reference/flag_ping_pong.cuh"

namespace dcuda_bench {

namespace peer_flag_detail {

using system_word = cuda::atomic_ref<unsigned, cuda::thread_scope_system>;

// Layout of each process's shared buffer: the counter the other GPU writes, on a line of its
// own, then [send: largest][receive: largest].
inline constexpr std::size_t flag_bytes = 256;

}  // namespace peer_flag_detail

struct peer_flag_args {
  unsigned* my_flag;                  // on this GPU: the other GPU stores message counters here
  unsigned* peer_flag;                // the other GPU's counter, mapped
  unsigned char* send;                // on this GPU: the payload
  unsigned char* my_receive;          // on this GPU: the other GPU copies its payload here
  unsigned char* peer_receive;        // the other GPU's receive area, mapped
  int size;                           // payload bytes (0: the counter alone)
  int warmup;                         // round trips before the first timed repetition
  int iterations;                     // round trips per repetition
  int process;                        // 0: sends first and times; 1: answers
  unsigned long long* repetition_ns;  // [repetitions], written by process 0
  int* mismatches;                    // 1 when the received bytes were wrong
};

__global__ void peer_flag_ping_pong_kernel(peer_flag_args args) {
  using peer_flag_detail::system_word;
  fill_payload(args.send, static_cast<std::uint64_t>(args.size), args.process);
  const bool first = args.process == 0;
  unsigned message = 0;
  const auto send = [&] {
    flag_ping_pong_detail::copy_block(args.peer_receive, args.send, args.size);
    __syncthreads();  // every thread's peer stores before thread 0's release
    if (threadIdx.x == 0) system_word(*args.peer_flag).store(message, cuda::memory_order_release);
  };
  const auto receive = [&] {
    if (threadIdx.x == 0) {
      while (system_word(*args.my_flag).load(cuda::memory_order_relaxed) != message) {
      }
      system_word(*args.my_flag).load(cuda::memory_order_acquire);
    }
    __syncthreads();
  };
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int round_trips = repetition < 0 ? args.warmup : args.iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < round_trips; ++i) {
      ++message;
      if (first) {
        send();
        receive();
      } else {
        receive();
        send();
      }
    }
    if (first && threadIdx.x == 0 && repetition >= 0) {
      args.repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
  if (!block_holds_payload(args.my_receive, static_cast<std::uint64_t>(args.size),
                           1 - args.process) &&
      threadIdx.x == 0) {
    *args.mismatches = 1;
  }
}

class peer_flag_ping_pong {
 public:
  // Collective over the 2 processes of `world` (one node, one GPU each, the current device):
  // maps each process's buffer into the other. Messages of up to `largest_message` bytes.
  peer_flag_ping_pong(const mpi_world& world, std::size_t largest_message)
      : world_(world),
        largest_(largest_message),
        buffers_(world, peer_flag_detail::flag_bytes + 2 * largest_message),
        repetition_ns_(repetitions * sizeof(unsigned long long)),
        mismatches_(sizeof(int)) {
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~peer_flag_ping_pong() { cudaStreamDestroy(stream_); }
  peer_flag_ping_pong(const peer_flag_ping_pong&) = delete;
  peer_flag_ping_pong& operator=(const peer_flag_ping_pong&) = delete;

  // Collective: one run of `size` bytes per message with one block of `threads` threads on each
  // GPU. Returns the median one-way latency (round trip / 2) on both processes, and whether both
  // received the right bytes.
  ping_pong_result run(int threads, int size, int warmup, int iterations) {
    using peer_flag_detail::flag_bytes;
    unsigned char* mine = buffers_.mine();
    unsigned char* peers = buffers_.peers();
    const std::size_t receive_offset = flag_bytes + largest_;
    // Counters start at 0 on both GPUs before either kernel starts.
    BENCH_CUDA_CHECK(cudaMemset(mine, 0, flag_bytes));
    BENCH_CUDA_CHECK(cudaMemset(mine + receive_offset, 0, largest_));
    BENCH_CUDA_CHECK(cudaMemset(mismatches_.get(), 0, sizeof(int)));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    world_.check(MPI_Barrier(world_.comm()), "MPI_Barrier");

    const peer_flag_args args{reinterpret_cast<unsigned*>(mine),
                              reinterpret_cast<unsigned*>(peers),
                              mine + flag_bytes,
                              mine + receive_offset,
                              peers + receive_offset,
                              size,
                              warmup,
                              iterations,
                              world_.process(),
                              repetition_ns_.get<unsigned long long>(),
                              mismatches_.get<int>()};
    peer_flag_ping_pong_kernel<<<1, static_cast<unsigned>(threads), 0, stream_>>>(args);
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));

    std::vector<unsigned long long> nanoseconds(repetitions);
    int wrong = 0;
    BENCH_CUDA_CHECK(cudaMemcpy(nanoseconds.data(), repetition_ns_.get(), repetition_ns_.size(),
                                cudaMemcpyDeviceToHost));
    BENCH_CUDA_CHECK(cudaMemcpy(&wrong, mismatches_.get(), sizeof wrong, cudaMemcpyDeviceToHost));
    const double median_us = world_.from_process0(median_one_way_us(nanoseconds, iterations));
    return {median_us, world_.sum(wrong) == 0};
  }

 private:
  const mpi_world& world_;
  std::size_t largest_;
  ipc_buffer_pair buffers_;
  device_bytes repetition_ns_;
  device_bytes mismatches_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace dcuda_bench
