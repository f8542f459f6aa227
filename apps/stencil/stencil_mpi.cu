// The stencil's MPI-CUDA baseline (thesis 5.5): a kernel per stage, then the halo planes go to
// the neighbouring GPUs' processes by MPI, between the kernels. Where MPI does not take device
// buffers (Open MPI without CUDA support), each plane is staged through pinned host memory.
//
//   mpirun -np 4 build/apps/stencil/stencil_mpi [--nx 512 --ny 2048 --nz 64 --iterations 100]
#include <vector>

#include "stencil_baseline.cuh"

namespace {

using namespace stencil;

class mpi_exchange {
 public:
  mpi_exchange(const mpi_session& session, const grid_shape& g, cudaStream_t stream)
      : g_(g),
        stream_(stream),
        rank_(session.rank()),
        size_(session.size()),
        device_buffers_(mpi_takes_device_buffers()),
        staging_(4 * g.plane_size()) {}

  void exchange(double* field, const halo_directions& directions) {
    const halo_messages messages = messages_of(g_, directions, rank_, size_);
    if (messages.sends.empty() && messages.receives.empty()) return;
    APP_CUDA(cudaStreamSynchronize(stream_));  // the stage's kernel: computation, not counted
    timer_.begin();
    const std::size_t plane = g_.plane_size();
    std::vector<MPI_Request> requests;
    const double* sources[2] = {nullptr, nullptr};  // what each send reads: the plane or its copy
    // Staging slots: sends in 0..1, receives in 2..3.
    auto staged = [&](std::size_t slot) { return staging_.get() + slot * plane; };
    for (std::size_t m = 0; m < messages.sends.size(); ++m) {
      const double* source = field + g_.plane_start(messages.sends[m].row);
      if (!device_buffers_) {
        APP_CUDA(cudaMemcpyAsync(staged(m), source, plane * sizeof(double), cudaMemcpyDeviceToHost,
                                 stream_));
        source = staged(m);
      }
      sources[m] = source;
    }
    if (!device_buffers_) APP_CUDA(cudaStreamSynchronize(stream_));
    for (std::size_t m = 0; m < messages.receives.size(); ++m) {
      double* target =
          device_buffers_ ? field + g_.plane_start(messages.receives[m].row) : staged(2 + m);
      requests.emplace_back();
      APP_MPI(MPI_Irecv(target, static_cast<int>(plane), MPI_DOUBLE, messages.receives[m].peer,
                        messages.receives[m].row < 0 ? up_tag : down_tag, MPI_COMM_WORLD,
                        &requests.back()));
    }
    for (std::size_t m = 0; m < messages.sends.size(); ++m) {
      requests.emplace_back();
      APP_MPI(MPI_Isend(sources[m], static_cast<int>(plane), MPI_DOUBLE, messages.sends[m].peer,
                        messages.sends[m].row == 0 ? down_tag : up_tag, MPI_COMM_WORLD,
                        &requests.back()));
    }
    APP_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    if (!device_buffers_) {
      for (std::size_t m = 0; m < messages.receives.size(); ++m)
        APP_CUDA(cudaMemcpyAsync(field + g_.plane_start(messages.receives[m].row), staged(2 + m),
                                 plane * sizeof(double), cudaMemcpyHostToDevice, stream_));
      APP_CUDA(cudaStreamSynchronize(stream_));
    }
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() const { return timer_.total_ms(); }

 private:
  // A plane sent down arrives in the receiver's top halo plane; one sent up in its bottom one.
  static constexpr int down_tag = 1, up_tag = 2;
  grid_shape g_;
  cudaStream_t stream_;
  int rank_, size_;
  bool device_buffers_;
  pinned_array<double> staging_;
  wall_clock_timer timer_;  // the exchanges' communication time
};

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("stencil_mpi", [&] {
    return run_baseline(argc, argv, "stencil_mpi", "mpi",
                        [](const mpi_session& session, const grid_shape& g, cudaStream_t stream) {
                          return mpi_exchange(session, g, stream);
                        });
  });
}
