// The stencil with NCCL, the baseline a user would write today: a kernel per stage, then the halo
// planes go to the neighbouring GPUs with ncclSend/ncclRecv on the same stream (device buffers,
// NVLink inside the node), no host synchronisation inside the loop.
//
//   mpirun -np 4 build/apps/stencil/stencil_nccl [--nx 512 --ny 2048 --nz 64 --iterations 100]

#include "nccl_communicator.h"
#include "stencil_baseline.cuh"

namespace {

using namespace stencil;

class nccl_exchange {
 public:
  nccl_exchange(const mpi_session& session, const grid_shape& g, cudaStream_t stream)
      : g_(g),
        stream_(stream),
        rank_(session.rank()),
        size_(session.size()),
        communicator_(session) {}

  void exchange(double* field, const halo_directions& directions) {
    const halo_messages messages = messages_of(g_, directions, rank_, size_);
    if (messages.sends.empty() && messages.receives.empty()) return;
    timer_.begin();  // the exchange's communication time
    const std::size_t plane = g_.plane_size();
    APP_NCCL(ncclGroupStart());
    for (const auto& message : messages.receives)
      APP_NCCL(ncclRecv(field + g_.plane_start(message.row), plane, ncclDouble, message.peer,
                        communicator_.get(), stream_));
    for (const auto& message : messages.sends)
      APP_NCCL(ncclSend(field + g_.plane_start(message.row), plane, ncclDouble, message.peer,
                        communicator_.get(), stream_));
    APP_NCCL(ncclGroupEnd());
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() { return timer_.total_ms(); }

 private:
  grid_shape g_;
  cudaStream_t stream_;
  int rank_, size_;
  nccl_communicator communicator_;
  stream_interval_timer timer_{stream_};
};

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("stencil_nccl", [&] {
    return run_baseline(argc, argv, "stencil_nccl", "nccl",
                        [](const mpi_session& session, const grid_shape& g, cudaStream_t stream) {
                          return nccl_exchange(session, g, stream);
                        });
  });
}
