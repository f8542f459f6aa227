// Power iteration's NCCL-CUDA baseline: the six steps one after another on one stream, kernels
// for the product, the additions and the norm, ncclSend/ncclRecv (grouped per round, device
// buffers, NVLink inside the node) between them; no host synchronisation inside the loop.
//
//   mpirun -np 4 build/apps/power/power_nccl [--n 262144 --row-nonzeros 786 --iterations 100]
#include "power_baseline.cuh"
#include "spmv_exchange_nccl.h"

int main(int argc, char** argv) {
  return run_or_abort("power_nccl", [&] {
    return power::run_baseline(argc, argv, "power_nccl", "nccl",
                               [](const mpi_session& session, cudaStream_t stream) {
                                 return spmv::nccl_exchange(session, stream);
                               });
  });
}
