// The network engine over MPI (thesis 4.2): moves remote operations between dcuda processes and
// tells its user when data has landed and when a source buffer may be reused.
//
// Per operation the sender sends the header, then the payload in chunks (so that a staged copy
// of chunk k+1 can overlap the transfer of chunk k). MPI keeps messages of one sender, tag and
// communicator in order, so the receiver gets headers in issue order and posts the payload
// receives in that order. Notifications are delivered per source in issue order: a notify waits
// until every earlier operation from the same source has landed, on every path.
//
// Single-threaded: the host proxy thread calls post and progress; nothing here blocks except
// quiesce, which keeps progressing while it waits.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <deque>
#include <vector>

#include "bootstrap/process_layout.h"
#include "transport/remote_operation.h"

namespace dcuda::transport {

// What the engine's user does with arriving and completed operations.
class delivery {
 public:
  virtual ~delivery() = default;
  // Where the payload of `op` lands on this process; nullptr when the target window cannot take
  // it (the engine then fails with a message naming the operation).
  virtual void* landing_address(const remote_operation& op) = 0;
  // `op` has landed, after every earlier operation from op.source_rank: count its notification.
  virtual void notify(const remote_operation& op) = 0;
  // The payload of `op`, posted here, may be reused. Reported in posting order.
  virtual void sent(const remote_operation& op) = 0;
};

class mpi_engine {
 public:
  static constexpr std::size_t default_chunk_bytes = std::size_t{1} << 20;

  // Collective over `world` (it is duplicated, so the engine's messages never meet the
  // application's).
  mpi_engine(MPI_Comm world, bootstrap::rank_layout ranks, delivery& sink,
             std::size_t chunk_bytes = default_chunk_bytes);
  mpi_engine(const mpi_engine&) = delete;
  mpi_engine& operator=(const mpi_engine&) = delete;
  ~mpi_engine();

  // Starts `op` towards the process that owns op.target_rank (another process). `payload`
  // (op.size bytes) must stay untouched until sink.sent(op).
  void post(const remote_operation& op, const void* payload);

  // Advances sends and receives; true when anything moved.
  bool progress();

  // Collective: returns once every operation posted anywhere before the call has been delivered
  // and every send has completed, on every process (it ends with a barrier).
  void quiesce();

 private:
  struct outgoing {
    remote_operation op;                // the header's send buffer
    std::vector<MPI_Request> requests;  // header, then payload chunks
  };
  struct incoming {
    remote_operation op;
    std::vector<MPI_Request> requests;  // payload chunks
  };

  bool complete_sends();
  bool take_headers();
  bool deliver_landed();
  void post_header_receive();
  void accept(const remote_operation& op, int source_process);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int process_index_ = 0;
  bootstrap::rank_layout ranks_;
  delivery& sink_;
  std::size_t chunk_bytes_;

  std::deque<outgoing> outgoing_;
  std::vector<std::deque<incoming>> incoming_;  // per source process, in issue order
  remote_operation header_buffer_{};
  MPI_Request header_request_ = MPI_REQUEST_NULL;
  std::vector<long long> headers_sent_to_;        // per process
  std::vector<long long> headers_received_from_;  // per process
};

}  // namespace dcuda::transport
