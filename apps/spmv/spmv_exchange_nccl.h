// The NCCL-CUDA baselines' exchange (spmv_exchange.h): each round's messages by ncclSend/ncclRecv
// (grouped) on the kernels' stream, device buffers, no host synchronisation inside the loop; the
// barrier is an ncclAllReduce of one value, which no GPU passes before every GPU has reached it.
// Communication time: between events recorded around each round and barrier, read once the timed
// loop has ended.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <utility>
#include <vector>

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
    mark_start();
    APP_NCCL(ncclGroupStart());
    for (const transfer& t : transfers.receives)
      APP_NCCL(ncclRecv(t.buffer, t.count, ncclDouble, t.peer, communicator_.get(), stream_));
    for (const transfer& t : transfers.sends)
      APP_NCCL(ncclSend(t.buffer, t.count, ncclDouble, t.peer, communicator_.get(), stream_));
    APP_NCCL(ncclGroupEnd());
    mark_end();
  }

  void barrier() {
    mark_start();
    APP_NCCL(ncclAllReduce(token_.get(), token_.get(), 1, ncclDouble, ncclMax, communicator_.get(),
                           stream_));
    mark_end();
  }

  void start_timing() {
    timing_ = true;
    marks_.clear();
  }
  double communication_ms() {
    APP_CUDA(cudaStreamSynchronize(stream_));
    double total = 0;
    for (const auto& mark : marks_) total += elapsed_ms(*mark.first, *mark.second);
    return total;
  }

 private:
  void mark_start() {
    if (!timing_) return;
    marks_.emplace_back(std::make_unique<cuda_event>(), std::make_unique<cuda_event>());
    APP_CUDA(cudaEventRecord(marks_.back().first->get(), stream_));
  }
  void mark_end() {
    if (timing_) APP_CUDA(cudaEventRecord(marks_.back().second->get(), stream_));
  }

  cudaStream_t stream_;
  nccl_communicator communicator_;
  device_array<double> token_;  // the barrier's value (its maximum, never read)
  bool timing_ = false;
  std::vector<std::pair<std::unique_ptr<cuda_event>, std::unique_ptr<cuda_event>>> marks_;
};

}  // namespace spmv
