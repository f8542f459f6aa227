// The particles' MPI-CUDA baseline (thesis 5.4): a kernel for the move, then the migrants go to
// the neighbouring GPUs' processes by MPI; a kernel for the migration, then the boundary segments.
// Messages have the size of what they carry: the counts of the segments sent are copied to the
// host first, then exactly their particles, behind the count, into one pinned staging buffer per
// message; the receiver takes up to a full segment and finds the count in front. Where MPI takes
// device buffers the staging would not be needed, but Open MPI without CUDA support does not, and
// this baseline always stages (the thesis's MPI-CUDA did too).
//
//   mpirun -np 4 build/apps/particles/particles_mpi [--width 416 --segments 416 --iterations 100]
#include <cstring>
#include <vector>

#include "particles_baseline.cuh"

namespace {

using namespace particles;

class mpi_exchange {
 public:
  mpi_exchange(const mpi_session& session, const device_particles& state, cudaStream_t stream)
      : layout_(state.layout),
        memory_(state.memory.get()),
        stream_(stream),
        rank_(session.rank()),
        size_(session.size()),
        message_bytes_(header_bytes +
                       static_cast<std::size_t>(layout_.capacity) * sizeof(particle)),
        staging_(4 * message_bytes_) {}

  void exchange(exchange_kind kind) {
    const exchange_messages messages = messages_of(kind, layout_.segments, rank_, size_);
    if (messages.sends.empty() && messages.receives.empty()) return;
    APP_CUDA(cudaStreamSynchronize(stream_));  // the kernel before: computation, not counted
    timer_.begin();
    // Staging slots: sends in 0..1, receives in 2..3; a count (int) in front of the particles.
    auto staged = [&](std::size_t slot) { return staging_.get() + slot * message_bytes_; };
    for (std::size_t m = 0; m < messages.sends.size(); ++m)
      APP_CUDA(cudaMemcpyAsync(staged(m), count_at(messages.sends[m]), sizeof(int),
                               cudaMemcpyDeviceToHost, stream_));
    APP_CUDA(cudaStreamSynchronize(stream_));
    std::vector<int> send_bytes;
    for (std::size_t m = 0; m < messages.sends.size(); ++m) {
      int count = 0;
      std::memcpy(&count, staged(m), sizeof(int));
      const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(particle);
      APP_CUDA(cudaMemcpyAsync(staged(m) + header_bytes, slot_at(messages.sends[m]), bytes,
                               cudaMemcpyDeviceToHost, stream_));
      send_bytes.push_back(static_cast<int>(header_bytes + bytes));
    }
    APP_CUDA(cudaStreamSynchronize(stream_));
    std::vector<MPI_Request> requests;
    for (std::size_t m = 0; m < messages.receives.size(); ++m) {
      requests.emplace_back();
      APP_MPI(MPI_Irecv(
          staged(2 + m), static_cast<int>(message_bytes_), MPI_BYTE, messages.receives[m].peer,
          messages.receives[m].segment < 0 ? up_tag : down_tag, MPI_COMM_WORLD, &requests.back()));
    }
    for (std::size_t m = 0; m < messages.sends.size(); ++m) {
      requests.emplace_back();
      APP_MPI(MPI_Isend(staged(m), send_bytes[m], MPI_BYTE, messages.sends[m].peer,
                        messages.sends[m].segment == 0 ? down_tag : up_tag, MPI_COMM_WORLD,
                        &requests.back()));
    }
    APP_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    for (std::size_t m = 0; m < messages.receives.size(); ++m) {
      int count = 0;
      std::memcpy(&count, staged(2 + m), sizeof(int));
      APP_CUDA(cudaMemcpyAsync(count_at(messages.receives[m]), staged(2 + m), sizeof(int),
                               cudaMemcpyHostToDevice, stream_));
      APP_CUDA(cudaMemcpyAsync(slot_at(messages.receives[m]), staged(2 + m) + header_bytes,
                               static_cast<std::size_t>(count) * sizeof(particle),
                               cudaMemcpyHostToDevice, stream_));
    }
    APP_CUDA(cudaStreamSynchronize(stream_));
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() const { return timer_.total_ms(); }

 private:
  // A segment sent down arrives in the receiver's top ghost (segments); one sent up in its
  // bottom ghost (-1).
  static constexpr int down_tag = 1, up_tag = 2;
  // The count in front of a message's particles, padded so that they stay 8-byte aligned.
  static constexpr std::size_t header_bytes = 8;

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
  std::size_t message_bytes_;
  pinned_array<unsigned char> staging_;
  wall_clock_timer timer_;  // the exchanges' communication time
};

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("particles_mpi", [&] {
    return run_baseline(argc, argv, "particles_mpi", "mpi",
                        [](const mpi_session& session, const device_particles& state,
                           cudaStream_t stream) { return mpi_exchange(session, state, stream); });
  });
}
