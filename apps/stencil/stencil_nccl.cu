// The stencil with NCCL, the baseline a user would write today: a kernel per stage, then the halo
// planes and columns go to the neighbouring GPUs with ncclSend/ncclRecv on the same stream (device
// buffers, NVLink inside the node), no host synchronisation inside the loop. A column (parts in
// x, --px) is packed by a kernel on the same stream first; it arrives in the x-halo as it is.
//
//   mpirun -np 4 build/apps/stencil/stencil_nccl [--nx 512 --ny 2048 --nz 64 --iterations 100]
//   mpirun -np 4 build/apps/stencil/stencil_nccl --px 2   (2 x 2 GPUs)

#include "nccl_communicator.h"
#include "stencil_baseline.cuh"

namespace {

using namespace stencil;

class nccl_exchange {
 public:
  nccl_exchange(const run_setup& setup, const mpi_session& session, cudaStream_t stream)
      : g_(setup.shape),
        grid_(setup.grid),
        stream_(stream),
        communicator_(session),
        packed_columns_(2 * column_values(g_)) {}

  void exchange(double* field, const halo_directions& directions) {
    const halo_messages messages = messages_of(g_, directions, grid_);
    if (messages.empty()) return;
    timer_.begin();  // the exchange's communication time
    const std::size_t plane = g_.plane_size(), column = column_values(g_);
    for (std::size_t m = 0; m < messages.column_sends.size(); ++m) {
      pack_column<<<column_pack_blocks(g_), 256, 0, stream_>>>(
          g_, field, messages.column_sends[m].column, packed_columns_.get() + m * column);
      APP_CUDA(cudaGetLastError());
    }
    APP_NCCL(ncclGroupStart());
    for (const auto& message : messages.receives)
      APP_NCCL(ncclRecv(field + g_.plane_start(message.row), plane, ncclDouble, message.peer,
                        communicator_.get(), stream_));
    for (const auto& message : messages.column_receives)
      APP_NCCL(ncclRecv(field + column_start(g_, message.column), column, ncclDouble, message.peer,
                        communicator_.get(), stream_));
    for (const auto& message : messages.sends)
      APP_NCCL(ncclSend(field + g_.plane_start(message.row), plane, ncclDouble, message.peer,
                        communicator_.get(), stream_));
    for (std::size_t m = 0; m < messages.column_sends.size(); ++m)
      APP_NCCL(ncclSend(packed_columns_.get() + m * column, column, ncclDouble,
                        messages.column_sends[m].peer, communicator_.get(), stream_));
    APP_NCCL(ncclGroupEnd());
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() { return timer_.total_ms(); }

 private:
  grid_shape g_;
  process_grid grid_;
  cudaStream_t stream_;
  nccl_communicator communicator_;
  device_array<double> packed_columns_;
  stream_interval_timer timer_{stream_};
};

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("stencil_nccl", [&] {
    return run_baseline(argc, argv, "stencil_nccl", "nccl",
                        [](const mpi_session& session, const run_setup& setup, const app_options&,
                           cudaStream_t stream) { return nccl_exchange(setup, session, stream); });
  });
}
