// The multi-GPU tests: one process per GPU under mpirun. Without a GPU for every process of the
// node the suite prints "SKIP: ..." (CTest reports it skipped) and runs nothing.
//
// DCUDA_TEST_SHARE_GPUS=1 runs more processes than the node has GPUs: process i takes GPU
// i % GPUs (dcuda's own choice, node-local index modulo visible GPUs; its warning about shared
// GPUs silenced with DCUDA_ALLOW_SHARED_GPUS), and the processes of one GPU reach each other by
// the peer path like processes of different GPUs (CUDA IPC; the GPU time-slices their persistent
// kernels). That is how a machine with 2 GPUs runs the peer rings of 3 and 4 processes (several
// rings per rank), and how CUDA_VISIBLE_DEVICES=0 puts every process on one GPU.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "bootstrap/process_layout.h"
#include "mpi_test_main.h"

int main(int argc, char** argv) {
  // As dcuda_host_init does, but before this program's first CUDA call (CUDA reads it then): the
  // stream-ordered waits' cases need more hardware queues than CUDA's 8 (docs/settings.md).
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int processes_here = 0, index_here = 0;
  MPI_Comm_size(node, &processes_here);
  MPI_Comm_rank(node, &index_here);
  MPI_Comm_free(&node);
  int gpus = 0;
  const cudaError_t status = cudaGetDeviceCount(&gpus);
  const char* share = std::getenv("DCUDA_TEST_SHARE_GPUS");
  const bool share_gpus = share != nullptr && std::string(share) == "1";
  int enough = status == cudaSuccess && (share_gpus ? gpus >= 1 : gpus >= processes_here) ? 1 : 0;
  if (enough == 1 && share_gpus) {
    setenv("DCUDA_ALLOW_SHARED_GPUS", "1", 1);
  }
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (enough == 0) {
    if (mpi_test::process_index() == 0) {
      std::printf("SKIP: multi_gpu_tests: needs %s: %d processes on this node, %d GPU(s) (%s)\n",
                  share_gpus ? "a GPU (DCUDA_TEST_SHARE_GPUS=1)" : "one GPU per process",
                  processes_here, status == cudaSuccess ? gpus : 0,
                  status == cudaSuccess ? "cudaGetDeviceCount" : cudaGetErrorString(status));
    }
    MPI_Finalize();
    return 0;
  }
  // The GPU dcuda_host_init will choose, made current now: a case allocates its windows before it
  // calls dcuda_host_init, and a case run alone (--case) would otherwise allocate them on GPU 0
  // in every process, where dcuda_host_share_memory does not find them.
  // (DCUDA_DEVICE, where set, is dcuda's choice: left to dcuda_host_init.)
  if (std::getenv("DCUDA_DEVICE") == nullptr) {
    cudaSetDevice(dcuda::bootstrap::choose_gpu(index_here, gpus, std::nullopt).device);
  }
  const int result = mpi_test::run_collectively(argc, argv);
  MPI_Finalize();
  return result;
}
