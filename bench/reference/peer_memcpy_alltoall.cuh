// Reference of alltoall_bandwidth: what the copy engines move when every GPU of the node copies
// into every other at once. Each of the P processes allocates a buffer of P areas on its GPU
// ([source][from step 1]...[from step P-1], as the dcuda windows of alltoall_schedule.h) and maps
// the buffers of all others with CUDA IPC (handles exchanged with MPI_Allgather). Process g
// queues cudaMemcpyAsync copies from its source area into area s of process g + s (mod P), one
// stream per destination, so that all its links carry copies at once. A repetition starts after
// an MPI barrier, when every process has queued and finished its copies, and ends with another;
// process 0 times it with the host clock. The figure is the payload of all copies of all
// processes / time (1 GB = 1e9 B), the median over the repetitions.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "common/cuda_check.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/statistics.h"

namespace dcuda_bench {

class peer_memcpy_alltoall {
 public:
  // Collective over the processes of `world` (one node, one GPU each): copies of up to
  // `largest_copy` bytes to each other GPU.
  peer_memcpy_alltoall(const mpi_world& world, std::size_t largest_copy)
      : world_(world),
        area_bytes_(largest_copy),
        mine_(static_cast<std::size_t>(world.processes()) * largest_copy),
        peers_(static_cast<std::size_t>(world.processes()), nullptr),
        streams_(static_cast<std::size_t>(world.processes() - 1), nullptr) {
    BENCH_CUDA_CHECK(cudaMemset(mine_.get(), 1, area_bytes_));
    cudaIpcMemHandle_t my_handle{};
    BENCH_CUDA_CHECK(cudaIpcGetMemHandle(&my_handle, mine_.get()));
    std::vector<cudaIpcMemHandle_t> handles(static_cast<std::size_t>(world.processes()));
    world.check(MPI_Allgather(&my_handle, sizeof my_handle, MPI_BYTE, handles.data(),
                              sizeof my_handle, MPI_BYTE, world.comm()),
                "MPI_Allgather");
    for (int process = 0; process < world.processes(); ++process) {
      if (process == world.process()) continue;
      BENCH_CUDA_CHECK(cudaIpcOpenMemHandle(&peers_[static_cast<std::size_t>(process)],
                                            handles[static_cast<std::size_t>(process)],
                                            cudaIpcMemLazyEnablePeerAccess));
    }
    for (cudaStream_t& stream : streams_) {
      BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    }
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Collective: no process frees its buffer while another still maps it.
  ~peer_memcpy_alltoall() {
    for (cudaStream_t stream : streams_) cudaStreamDestroy(stream);
    for (void* peer : peers_) {
      if (peer != nullptr) cudaIpcCloseMemHandle(peer);
    }
    MPI_Barrier(world_.comm());
  }
  peer_memcpy_alltoall(const peer_memcpy_alltoall&) = delete;
  peer_memcpy_alltoall& operator=(const peer_memcpy_alltoall&) = delete;

  // Collective: aggregate payload GB/s when every process copies `bytes` bytes (at most the
  // largest copy) into every other process's GPU at once, on every process.
  double gigabytes_per_second(std::size_t bytes) {
    const int processes = world_.processes();
    const std::size_t round_bytes =
        static_cast<std::size_t>(processes) * static_cast<std::size_t>(processes - 1) * bytes;
    // As memcpy_bandwidth.cuh, over all copies of the node: ~8 GiB or 1000 copies per
    // destination per repetition, whichever comes first.
    const int copies = static_cast<int>(std::clamp<std::size_t>(8 * GiB / round_bytes, 3, 1000));
    copy(bytes, copies);  // warm-up
    synchronize();
    std::vector<double> rates;
    for (int repetition = 0; repetition < repetitions; ++repetition) {
      world_.check(MPI_Barrier(world_.comm()), "MPI_Barrier");
      const auto start = std::chrono::steady_clock::now();
      copy(bytes, copies);
      synchronize();
      world_.check(MPI_Barrier(world_.comm()), "MPI_Barrier");
      const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
      rates.push_back(static_cast<double>(round_bytes) * copies / seconds.count() / 1e9);
    }
    return world_.from_process0(median(rates));
  }

 private:
  // Queues the copies of every destination, interleaved so that all streams get work at once; no
  // host synchronisation, which would leave the copy engines idle.
  void copy(std::size_t bytes, int copies) {
    const int processes = world_.processes();
    for (int i = 0; i < copies; ++i) {
      for (int step = 1; step < processes; ++step) {
        const int target = (world_.process() + step) % processes;
        unsigned char* area =
            static_cast<unsigned char*>(peers_[static_cast<std::size_t>(target)]) +
            static_cast<std::size_t>(step) * area_bytes_;
        BENCH_CUDA_CHECK(cudaMemcpyAsync(area, mine_.get(), bytes, cudaMemcpyDefault,
                                         streams_[static_cast<std::size_t>(step - 1)]));
      }
    }
  }

  void synchronize() {
    for (cudaStream_t stream : streams_) BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  const mpi_world& world_;
  std::size_t area_bytes_;
  device_bytes mine_;
  std::vector<void*> peers_;           // [process]: its buffer, mapped; nullptr for this process
  std::vector<cudaStream_t> streams_;  // [step - 1]: the copies to process + step
};

}  // namespace dcuda_bench
