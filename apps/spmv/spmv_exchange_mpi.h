// The MPI-CUDA baselines' exchange (spmv_exchange.h): each round's messages by MPI between the
// kernels, staged through pinned host memory where MPI does not take device buffers (Open MPI
// without CUDA support), and MPI_Barrier. Communication time: wall time of the rounds and barriers,
// after the stream's kernels have finished (their time is computation).
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <memory>
#include <vector>

#include "cuda_resources.h"
#include "mpi_process.h"
#include "spmv_exchange.h"

namespace spmv {

class mpi_exchange {
 public:
  explicit mpi_exchange(cudaStream_t stream)
      : stream_(stream), device_buffers_(mpi_takes_device_buffers()) {}

  void round(const round_transfers& transfers) {
    if (transfers.empty()) return;
    APP_CUDA(cudaStreamSynchronize(stream_));  // the kernels before: computation, not counted
    timer_.begin();
    // Staging slots: the sends first, then the receives.
    const std::size_t sends = transfers.sends.size();
    std::vector<const double*> sources;
    for (std::size_t m = 0; m < sends; ++m) {
      const transfer& t = transfers.sends[m];
      const double* source = t.buffer;
      if (!device_buffers_) {
        double* staged = staging(m, t.count);
        APP_CUDA(cudaMemcpyAsync(staged, t.buffer, t.count * sizeof(double), cudaMemcpyDeviceToHost,
                                 stream_));
        source = staged;
      }
      sources.push_back(source);
    }
    if (!device_buffers_ && sends > 0) APP_CUDA(cudaStreamSynchronize(stream_));
    std::vector<MPI_Request> requests;
    for (std::size_t m = 0; m < transfers.receives.size(); ++m) {
      const transfer& t = transfers.receives[m];
      double* target = device_buffers_ ? t.buffer : staging(sends + m, t.count);
      requests.emplace_back();
      APP_MPI(MPI_Irecv(target, static_cast<int>(t.count), MPI_DOUBLE, t.peer, tag_, MPI_COMM_WORLD,
                        &requests.back()));
    }
    for (std::size_t m = 0; m < sends; ++m) {
      requests.emplace_back();
      APP_MPI(MPI_Isend(sources[m], static_cast<int>(transfers.sends[m].count), MPI_DOUBLE,
                        transfers.sends[m].peer, tag_, MPI_COMM_WORLD, &requests.back()));
    }
    APP_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    if (!device_buffers_ && !transfers.receives.empty()) {
      for (std::size_t m = 0; m < transfers.receives.size(); ++m) {
        const transfer& t = transfers.receives[m];
        APP_CUDA(cudaMemcpyAsync(t.buffer, staging_[sends + m]->get(), t.count * sizeof(double),
                                 cudaMemcpyHostToDevice, stream_));
      }
      APP_CUDA(cudaStreamSynchronize(stream_));
    }
    timer_.end();
  }

  void barrier() {
    APP_CUDA(cudaStreamSynchronize(stream_));
    timer_.begin();
    APP_MPI(MPI_Barrier(MPI_COMM_WORLD));
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() const { return timer_.total_ms(); }

 private:
  // Pinned slot `slot` with room for `count` values (allocated at first use: in the warm-up).
  double* staging(std::size_t slot, std::size_t count) {
    if (staging_.size() <= slot) staging_.resize(slot + 1);
    if (!staging_[slot] || staging_[slot]->size() < count)
      staging_[slot] = std::make_unique<pinned_array<double>>(count);
    return staging_[slot]->get();
  }

  // Messages of one pair of processes never overlap in time (each round completes before the
  // next), so one tag serves them all.
  static constexpr int tag_ = 7;
  cudaStream_t stream_;
  bool device_buffers_;
  std::vector<std::unique_ptr<pinned_array<double>>> staging_;
  wall_clock_timer timer_;  // the exchanges' communication time
};

}  // namespace spmv
