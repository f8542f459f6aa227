// The NCCL-CUDA baselines' exchange (spmv_exchange.h): each round's messages by ncclSend/ncclRecv
// (grouped) on the kernels' stream, device buffers, no host synchronisation inside the loop; the
// barrier is an ncclAllReduce of one value, which no GPU passes before every GPU has reached it.
// Communication time: between events recorded around each round and barrier, read once the timed
// loop has ended.
#pragma once

#include <cuda_runtime.h>

#include "cuda_resources.h"
#include "mpi_process.h"
#include "nccl_communicator.h"
#include "spmv_exchange.h"

namespace spmv {

class nccl_exchange {
 public:
  nccl_exchange(const mpi_session& session, cudaStream_t stream)
      : stream_(stream), communicator_(session), token_(1) {}

  void round(const round_transfers& transfers) {
    if (transfers.empty()) return;
    timer_.begin();
    APP_NCCL(ncclGroupStart());
    for (const transfer& t : transfers.receives)
      APP_NCCL(ncclRecv(t.buffer, t.count, ncclDouble, t.peer, communicator_.get(), stream_));
    for (const transfer& t : transfers.sends)
      APP_NCCL(ncclSend(t.buffer, t.count, ncclDouble, t.peer, communicator_.get(), stream_));
    APP_NCCL(ncclGroupEnd());
    timer_.end();
  }

  void barrier() {
    timer_.begin();
    APP_NCCL(ncclAllReduce(token_.get(), token_.get(), 1, ncclDouble, ncclMax, communicator_.get(),
                           stream_));
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() { return timer_.total_ms(); }

 private:
  cudaStream_t stream_;
  nccl_communicator communicator_;
  device_array<double> token_;  // the barrier's value (its maximum, never read)
  stream_interval_timer timer_{stream_};
};

}  // namespace spmv
