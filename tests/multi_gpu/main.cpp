// The multi-GPU tests: one process per GPU under mpirun. Without a GPU for every process of the
// node the suite prints "SKIP: ..." (CTest reports it skipped) and runs nothing.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>

#include "mpi_test_main.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int processes_here = 0;
  MPI_Comm_size(node, &processes_here);
  MPI_Comm_free(&node);
  int gpus = 0;
  const cudaError_t status = cudaGetDeviceCount(&gpus);
  int enough = status == cudaSuccess && gpus >= processes_here ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (enough == 0) {
    if (mpi_test::process_index() == 0) {
      std::printf(
          "SKIP: multi_gpu_tests: needs one GPU per process: %d processes on this node, "
          "%d GPU(s) (%s)\n",
          processes_here, status == cudaSuccess ? gpus : 0,
          status == cudaSuccess ? "cudaGetDeviceCount" : cudaGetErrorString(status));
    }
    MPI_Finalize();
    return 0;
  }
  const int result = mpi_test::run_collectively();
  MPI_Finalize();
  return result;
}
