// The spmv NCCL-CUDA baseline, what a user would write today: kernels for the product and the
// additions, the broadcast and reduction rounds by ncclSend/ncclRecv on the same stream (device
// buffers, NVLink inside the node), a one-value ncclAllReduce as the barrier after each product;
// no host synchronisation inside the loop.
//
//   mpirun -np 4 build/apps/spmv/spmv_nccl [--n 262144 --row-nonzeros 786 --iterations 100]
#include "spmv_baseline.cuh"
#include "spmv_exchange_nccl.h"

int main(int argc, char** argv) {
  return run_or_abort("spmv_nccl", [&] {
    return spmv::run_baseline(argc, argv, "spmv_nccl", "nccl",
                              [](const mpi_session& session, cudaStream_t stream) {
                                return spmv::nccl_exchange(session, stream);
                              });
  });
}
