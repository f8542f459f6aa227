// The spmv MPI-CUDA baseline (thesis 5.6): kernels for the product and the additions, the
// broadcast and reduction rounds by MPI between them (staged through pinned host memory where MPI
// does not take device buffers), MPI_Barrier after each product.
//
//   mpirun -np 4 build/apps/spmv/spmv_mpi [--n 262144 --row-nonzeros 786 --iterations 100]
#include "spmv_baseline.cuh"
#include "spmv_exchange_mpi.h"

int main(int argc, char** argv) {
  return run_or_abort("spmv_mpi", [&] {
    return spmv::run_baseline(
        argc, argv, "spmv_mpi", "mpi",
        [](const mpi_session&, cudaStream_t stream) { return spmv::mpi_exchange(stream); });
  });
}
