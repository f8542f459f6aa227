// An NCCL communicator over all MPI processes (one GPU each), for the NCCL-CUDA baselines:
// process 0 makes the unique id, MPI broadcasts it. APP_NCCL(ncclSend(...)) throws
// std::runtime_error naming the call and NCCL's error text.
#pragma once

#include <nccl.h>

#include <stdexcept>
#include <string>

#include "mpi_process.h"

inline void check_nccl(ncclResult_t status, const char* call) {
  if (status != ncclSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + ncclGetErrorString(status));
}
#define APP_NCCL(call) check_nccl((call), #call)

class nccl_communicator {
 public:
  explicit nccl_communicator(const mpi_session& session) {
    ncclUniqueId id;
    if (session.rank() == 0) APP_NCCL(ncclGetUniqueId(&id));
    APP_MPI(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));
    APP_NCCL(ncclCommInitRank(&comm_, session.size(), id, session.rank()));
  }
  ~nccl_communicator() { ncclCommDestroy(comm_); }
  nccl_communicator(const nccl_communicator&) = delete;
  nccl_communicator& operator=(const nccl_communicator&) = delete;
  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
};
