// Probe behind "memcheck on the peer path" (docs/performance.md): does compute-sanitizer memcheck
// accept a kernel's store into memory another process exported with CUDA IPC? Two processes, one
// GPU each; each exports a cudaMalloc allocation of the multi-GPU ring test's size, opens the
// other's, and thread 0 stores one byte at `offset` in it. Not part of the build:
//   nvcc -O2 -std=c++17 -arch=sm_90 -ccbin mpicxx -o ipc_memcheck_probe \
//     bench/probes/ipc_memcheck_probe.cu
//   mpirun -np 2 compute-sanitizer --tool memcheck ./ipc_memcheck_probe OFFSET lazy|explicit|late
// "explicit" also calls cudaDeviceEnablePeerAccess before opening the handle. "late" opens the
// handle while the storing kernel already runs (as dcuda_win_create does inside the persistent
// kernel): the kernel waits for the address in mapped host memory.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t err_ = (x);                                                       \
    if (err_ != cudaSuccess) {                                                    \
      std::printf("process %d: %s: %s\n", process, #x, cudaGetErrorString(err_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                               \
    }                                                                             \
  } while (0)

__global__ void store_one_byte(unsigned char* target, unsigned char value) {
  if (threadIdx.x == 0) *target = value;
}

__global__ void store_one_byte_when_told(unsigned char* volatile* target, unsigned char value) {
  if (threadIdx.x == 0) {
    unsigned char* address = nullptr;
    while ((address = *target) == nullptr) {
    }
    *address = value;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int process = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  const size_t offset = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 0;
  const bool explicit_peer = argc > 2 && std::strcmp(argv[2], "explicit") == 0;
  const bool late = argc > 2 && std::strcmp(argv[2], "late") == 0;
  const size_t bytes = 4 * 2 * ((3u << 20) + 5);  // the ring test: 4 ranks x [send][receive]
  CK(cudaSetDevice(process));
  if (explicit_peer) CK(cudaDeviceEnablePeerAccess(1 - process, 0));
  unsigned char* mine = nullptr;
  CK(cudaMalloc(&mine, bytes));
  CK(cudaMemset(mine, 0, bytes));
  cudaIpcMemHandle_t handle{}, peers{};
  CK(cudaIpcGetMemHandle(&handle, mine));
  MPI_Sendrecv(&handle, sizeof handle, MPI_BYTE, 1 - process, 0, &peers, sizeof peers, MPI_BYTE,
               1 - process, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  unsigned char** told = nullptr;  // mapped host memory: where the running kernel stores
  if (late) {
    CK(cudaHostAlloc(&told, sizeof *told, cudaHostAllocMapped));
    *told = nullptr;
    store_one_byte_when_told<<<1, 32>>>(told, 7);
    CK(cudaGetLastError());
  }
  void* theirs = nullptr;
  CK(cudaIpcOpenMemHandle(&theirs, peers, cudaIpcMemLazyEnablePeerAccess));
  std::printf("process %d: own allocation %p, peer's mapped at %p, %zu bytes, store at +%zu (%s)\n",
              process, static_cast<void*>(mine), theirs, bytes, offset,
              explicit_peer ? "peer access enabled explicitly"
              : late        ? "opened while the kernel runs"
                            : "lazy peer access");
  MPI_Barrier(MPI_COMM_WORLD);
  if (late) {
    *reinterpret_cast<unsigned char* volatile*>(told) =
        static_cast<unsigned char*>(theirs) + offset;
  } else {
    store_one_byte<<<1, 32>>>(static_cast<unsigned char*>(theirs) + offset, 7);
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  MPI_Barrier(MPI_COMM_WORLD);
  unsigned char seen = 0;
  CK(cudaMemcpy(&seen, mine + offset, 1, cudaMemcpyDeviceToHost));
  std::printf("process %d: byte at +%zu is %d (expected 7)\n", process, offset, seen);
  CK(cudaIpcCloseMemHandle(theirs));
  if (told != nullptr) CK(cudaFreeHost(told));
  CK(cudaFree(mine));
  MPI_Finalize();
  return seen == 7 ? 0 : 1;
}
