// Power iteration's MPI-CUDA baseline (thesis 5.7): the six steps one after another, kernels for
// the product, the additions and the norm, MPI messages between them (staged through pinned host
// memory where MPI does not take device buffers).
//
//   mpirun -np 4 build/apps/power/power_mpi [--n 262144 --row-nonzeros 786 --iterations 100]
#include "power_baseline.cuh"
#include "spmv_exchange_mpi.h"

int main(int argc, char** argv) {
  return run_or_abort("power_mpi", [&] {
    return power::run_baseline(
        argc, argv, "power_mpi", "mpi",
        [](const mpi_session&, cudaStream_t stream) { return spmv::mpi_exchange(stream); });
  });
}
