// The stencil's MPI-CUDA baseline (thesis 5.5): a kernel per stage, then the halo planes and
// columns go to the neighbouring GPUs' processes by MPI, between the kernels. Where MPI does not
// take device buffers (Open MPI without CUDA support), each message is staged through pinned host
// memory. A column (parts in x, --px) is packed by a kernel, or with --mpi_datatypes 1 described
// by an MPI vector type and sent from a host copy of the part's rows (MPI's datatype engine does
// the packing on the host).
//
//   mpirun -np 4 build/apps/stencil/stencil_mpi [--nx 512 --ny 2048 --nz 64 --iterations 100]
//   mpirun -np 4 build/apps/stencil/stencil_mpi --px 2 [--mpi_datatypes 1]   (2 x 2 GPUs)
#include <memory>
#include <vector>

#include "stencil_baseline.cuh"

namespace {

using namespace stencil;

// An MPI datatype, committed, freed with its owner.
class mpi_datatype {
 public:
  // `count` doubles, one every `stride`.
  mpi_datatype(int count, int stride) {
    APP_MPI(MPI_Type_vector(count, 1, stride, MPI_DOUBLE, &type_));
    APP_MPI(MPI_Type_commit(&type_));
  }
  ~mpi_datatype() { MPI_Type_free(&type_); }
  mpi_datatype(const mpi_datatype&) = delete;
  mpi_datatype& operator=(const mpi_datatype&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

class mpi_exchange {
 public:
  mpi_exchange(const run_setup& setup, const app_options& options, cudaStream_t stream)
      : g_(setup.shape),
        grid_(setup.grid),
        stream_(stream),
        device_buffers_(mpi_takes_device_buffers()),
        staging_(4 * g_.plane_size() + 4 * column_values(g_)),
        packed_columns_(2 * column_values(g_)) {
    // With --mpi_datatypes 1 and parts in x, columns go as an MPI vector type, from the field
    // itself or from a host copy of the part's rows.
    if (grid_.columns > 1 && options.get("mpi_datatypes") != 0) {
      column_type_ = std::make_unique<mpi_datatype>(g_.ny * g_.nz, g_.nx);
      if (!device_buffers_)
        host_rows_ = std::make_unique<pinned_array<double>>(g_.plane_size() * g_.ny);
    }
  }

  void exchange(double* field, const halo_directions& directions) {
    const halo_messages messages = messages_of(g_, directions, grid_);
    if (messages.empty()) return;
    APP_CUDA(cudaStreamSynchronize(stream_));  // the stage's kernel: computation, not counted
    timer_.begin();
    std::vector<MPI_Request> requests;
    // What each send reads, and as what: a plane or a packed column (contiguous), or a column in
    // the field or its host copy (column_type_).
    struct send {
      const void* source;
      int count;
      MPI_Datatype type;
      int peer, tag;
    };
    std::vector<send> sends;
    for (std::size_t m = 0; m < messages.sends.size(); ++m) {
      const double* source = field + g_.plane_start(messages.sends[m].row);
      if (!device_buffers_) source = to_host(source, staged_plane(m), g_.plane_size());
      sends.push_back({source, static_cast<int>(g_.plane_size()), MPI_DOUBLE,
                       messages.sends[m].peer, messages.sends[m].row == 0 ? down_tag : up_tag});
    }
    const double* rows = field + g_.plane_start(0);  // the columns' source, with column_type_
    if (column_type_ && !device_buffers_ && !messages.column_sends.empty())
      rows = to_host(rows, host_rows_->get(), host_rows_->size());
    for (std::size_t m = 0; m < messages.column_sends.size(); ++m) {
      const column_message& message = messages.column_sends[m];
      const int tag = message.column == 0 ? west_tag : east_tag;
      if (column_type_) {
        sends.push_back({rows + message.column, 1, column_type_->get(), message.peer, tag});
        continue;
      }
      double* packed = packed_columns_.get() + m * column_values(g_);
      pack_column<<<column_pack_blocks(g_), 256, 0, stream_>>>(g_, field, message.column, packed);
      APP_CUDA(cudaGetLastError());
      const double* source =
          device_buffers_ ? packed : to_host(packed, staged_column(m), column_values(g_));
      sends.push_back({source, static_cast<int>(column_values(g_)), MPI_DOUBLE, message.peer, tag});
    }
    APP_CUDA(cudaStreamSynchronize(stream_));  // the copies and packs the sends read

    // Receives: straight into the halo planes and x-halos, or into staging first.
    struct landing {
      double* target;
      const double* staged;
      std::size_t values;
    };
    std::vector<landing> landings;
    auto receive = [&](double* target, double* staged, std::size_t values, int peer, int tag) {
      double* into = device_buffers_ ? target : staged;
      if (!device_buffers_) landings.push_back({target, staged, values});
      requests.emplace_back();
      APP_MPI(MPI_Irecv(into, static_cast<int>(values), MPI_DOUBLE, peer, tag, MPI_COMM_WORLD,
                        &requests.back()));
    };
    for (std::size_t m = 0; m < messages.receives.size(); ++m) {
      const plane_message& message = messages.receives[m];
      receive(field + g_.plane_start(message.row), staged_plane(2 + m), g_.plane_size(),
              message.peer, message.row < 0 ? up_tag : down_tag);
    }
    for (std::size_t m = 0; m < messages.column_receives.size(); ++m) {
      const column_message& message = messages.column_receives[m];
      receive(field + column_start(g_, message.column), staged_column(2 + m), column_values(g_),
              message.peer, message.column < 0 ? east_tag : west_tag);
    }
    for (const send& s : sends) {
      requests.emplace_back();
      APP_MPI(
          MPI_Isend(s.source, s.count, s.type, s.peer, s.tag, MPI_COMM_WORLD, &requests.back()));
    }
    APP_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    for (const landing& l : landings)
      APP_CUDA(cudaMemcpyAsync(l.target, l.staged, l.values * sizeof(double),
                               cudaMemcpyHostToDevice, stream_));
    if (!landings.empty()) APP_CUDA(cudaStreamSynchronize(stream_));
    timer_.end();
  }

  void start_timing() { timer_.start(); }
  double communication_ms() const { return timer_.total_ms(); }

 private:
  // A plane sent down arrives in the receiver's top halo plane, one sent up in its bottom one; a
  // column sent west in its east x-halo, one sent east in its west x-halo.
  static constexpr int down_tag = 1, up_tag = 2, west_tag = 3, east_tag = 4;

  // Queues the copy of `values` values from the GPU to `staged`; returns `staged`.
  const double* to_host(const double* source, double* staged, std::size_t values) {
    APP_CUDA(
        cudaMemcpyAsync(staged, source, values * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    return staged;
  }
  // Staging slots: planes 0..3 (sends 0..1, receives 2..3), then columns 0..3 likewise.
  double* staged_plane(std::size_t slot) { return staging_.get() + slot * g_.plane_size(); }
  double* staged_column(std::size_t slot) {
    return staging_.get() + 4 * g_.plane_size() + slot * column_values(g_);
  }

  grid_shape g_;
  process_grid grid_;
  cudaStream_t stream_;
  bool device_buffers_;
  pinned_array<double> staging_;
  device_array<double> packed_columns_;
  std::unique_ptr<mpi_datatype> column_type_;  // null: columns packed by a kernel
  std::unique_ptr<pinned_array<double>>
      host_rows_;           // the part's rows, for column_type_ on the host
  wall_clock_timer timer_;  // the exchanges' communication time
};

}  // namespace

int main(int argc, char** argv) {
  return run_or_abort("stencil_mpi", [&] {
    return run_baseline(argc, argv, "stencil_mpi", "mpi",
                        [](const mpi_session&, const run_setup& setup, const app_options& options,
                           cudaStream_t stream) { return mpi_exchange(setup, options, stream); });
  });
}
