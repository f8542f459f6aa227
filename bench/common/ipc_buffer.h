// Device memory shared between the 2 processes of a benchmark on one node: each process allocates
// a buffer on its GPU and maps the other process's buffer into its own address space with CUDA
// IPC, so that kernels and copies of one GPU can write the other GPU's memory over NVLink (peer
// access is enabled by cudaIpcOpenMemHandle).
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstddef>

#include "common/cuda_check.h"
#include "common/mpi_world.h"

namespace dcuda_bench {

class ipc_buffer_pair {
 public:
  // Collective over the 2 processes of world.comm(); both pass the same `bytes`. The buffers
  // are on each process's current GPU.
  ipc_buffer_pair(const mpi_world& world, std::size_t bytes) : world_(world), mine_(bytes) {
    cudaIpcMemHandle_t my_handle{};
    cudaIpcMemHandle_t peer_handle{};
    BENCH_CUDA_CHECK(cudaIpcGetMemHandle(&my_handle, mine_.get()));
    const int other = 1 - world.process();
    world.check(
        MPI_Sendrecv(&my_handle, sizeof my_handle, MPI_BYTE, other, 0, &peer_handle,
                     sizeof peer_handle, MPI_BYTE, other, 0, world.comm(), MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
    BENCH_CUDA_CHECK(cudaIpcOpenMemHandle(&peers_, peer_handle, cudaIpcMemLazyEnablePeerAccess));
  }
  // Collective: neither process frees its buffer while the other still maps it.
  ~ipc_buffer_pair() {
    cudaIpcCloseMemHandle(peers_);
    MPI_Barrier(world_.comm());
  }
  ipc_buffer_pair(const ipc_buffer_pair&) = delete;
  ipc_buffer_pair& operator=(const ipc_buffer_pair&) = delete;

  unsigned char* mine() const { return mine_.get(); }                           // on this GPU
  unsigned char* peers() const { return static_cast<unsigned char*>(peers_); }  // the other GPU
  std::size_t size() const { return mine_.size(); }

 private:
  const mpi_world& world_;
  device_bytes mine_;
  void* peers_ = nullptr;
};

}  // namespace dcuda_bench
