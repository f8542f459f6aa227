// The particles with NCCL, the baseline a user would write today: a kernel for the move, then the
// migrants go to the neighbouring GPUs with ncclSend/ncclRecv on the same stream; a kernel for the
// migration, then the boundary segments; no host synchronisation inside the loop.
//
// NCCL takes the size of every message from the host when the call is queued, and the counts are
// on the GPU: learning them would take a device-to-host copy and a stream synchronisation per
// exchange, the host round trip this baseline exists to avoid. So each message is the count and
// the segment's whole capacity of slots (at the default sizes about 3x what it carries, 118 KB
// per message, a few microseconds over NVLink); the receiver uses as many as the count says.
//
//   mpirun -np 4 build/apps/particles/particles_nccl [--width 416 --segments 416 --iterations 100]

#include "nccl_communicator.h"
#include "particles_baseline.cuh"

namespace {

using namespace particles;

class nccl_exchange {
 public:
  nccl_exchange(const mpi_session& session, const device_particles& state, cudaStream_t stream)
      : layout_(state.layout),
        memory_(state.memory.get()),
        stream_(stream),
        rank_(session.rank()),
        size_(session.size()),
        communicator_(session) {}

  void exchange(exchange_kind kind) {
    const exchange_messages messages = messages_of(kind, layout_.segments, rank_, size_);
    if (messages.sends.empty() && messages.receives.empty()) return;
    timer_.begin();  // the exchange's communication time
    const std::size_t slot_bytes = static_cast<std::size_t>(layout_.capacity) * sizeof(particle);
    // Between two processes the count and the slots go in this order both ways, and NCCL matches
    // the sends and receives of a pair in order.
    APP_NCCL(ncclGroupStart());
    for (const auto& message : messages.receives) {
      APP_NCCL(
          ncclRecv(count_at(message), 1, ncclInt32, message.peer, communicator_.get(), stream_));
      APP_NCCL(ncclRecv(slot_at(message), slot_bytes, ncclUint8, message.peer, communicator_.get(),
                        stream_));
    }
    for (const auto& message : messages.sends) {
      APP_NCCL(
          ncclSend(count_at(message), 1, ncclInt32, message.peer, communicator_.get(), stream_));
      APP_NCCL(ncclSend(slot_at(message), slot_bytes, ncclUint8, message.peer, communicator_.get(),
                        stream_));
    }
    APP_NCCL(ncclGroupEnd());
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() { return timer_.total_ms(); }

 private:
  unsigned char* count_at(const segment_message& message) const {
    return memory_ + layout_.count_offset(message.store, message.segment);
  }
  unsigned char* slot_at(const segment_message& message) const {
    return memory_ + layout_.slot_offset(message.store, message.segment);
  }

  store_layout layout_;
  unsigned char* memory_;
  cudaStream_t stream_;
  int rank_, size_;
  nccl_communicator communicator_;
  stream_interval_timer timer_{stream_};
};

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("particles_nccl", [&] {
    return run_baseline(argc, argv, "particles_nccl", "nccl",
                        [](const mpi_session& session, const device_particles& state,
                           cudaStream_t stream) { return nccl_exchange(session, state, stream); });
  });
}
