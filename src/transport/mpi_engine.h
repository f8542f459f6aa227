// The network engine over MPI (thesis 4.2): moves remote operations between dcuda processes and
// tells its user when data has landed and when a source buffer may be reused.
//
// Per operation the sender sends the header, then the payload in chunks (so that a staged copy
// of chunk k+1 can overlap the transfer of chunk k). MPI keeps messages of one sender, tag and
// communicator in order, so the receiver gets headers in issue order and posts the payload
// receives in that order. Notifications are delivered per source in issue order: a notify waits
// until every earlier operation from the same source has landed, on every path.
//
// Collectives (dcuda's world barriers, window creation) are announcements: each process tells
// every other one how many operations it has sent to it so far, with a contribution attached
// (window entries). A collective is complete on a process once every announcement is there and
// every operation counted in them has been delivered here. Who has not announced yet is known at
// any time, so a collective that some process never joins can be reported by name.
//
// Single-threaded: the host proxy thread calls post, progress and the collective calls; nothing
// here blocks except quiesce, which keeps progressing while it waits.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/remote_operation.h"
#include "transport/message_checks.h"

namespace dcuda::transport {

// What the engine's user does with arriving and completed operations.
class delivery {
 public:
  virtual ~delivery() = default;
  // Whether `op` can be placed now. False holds it, and every later operation from its source
  // process, until a later progress() (the target window may still be in creation here while
  // the source already uses it). True commits: the engine accepts `op` at once and calls
  // landed() for it later, so the sink may set aside now what landed() will need.
  virtual bool ready_for(const remote_operation& /*op*/) { return true; }
  // Where the payload of `op` lands on this process; nullptr when the target window cannot take
  // it (the engine then fails with a message naming the operation and refusal(op)).
  virtual void* landing_address(const remote_operation& op) = 0;
  // Why landing_address refused `op`, for the engine's message.
  virtual std::string refusal(const remote_operation& /*op*/) const {
    return "it does not fit the target's window";
  }
  // `op` has landed at `landing` (what landing_address gave; nullptr without payload), after
  // every earlier operation from the same source process. Called for every operation, in order.
  virtual void landed(const remote_operation& op, void* landing) = 0;
  // The payload of `op`, posted here, may be reused. Reported in posting order.
  virtual void sent(const remote_operation& op) = 0;
  // The largest payload one arriving operation may have: what the sink can stage. A header that
  // names more is refused before anything is set aside for it.
  virtual std::int64_t largest_payload() const { return std::int64_t{1} << 30; }
};

class mpi_engine {
 public:
  static constexpr std::size_t default_chunk_bytes = std::size_t{1} << 20;
  // Payloads up to this size travel inside the header message.
  static constexpr std::size_t header_payload_bytes = 256;

  // Collective over `world` (it is duplicated, so the engine's messages never meet the
  // application's). Every process must give the same `chunk_bytes` (both ends of an operation
  // count its chunks): a difference throws runtime::error (DCUDA_ERROR_SETTING) everywhere.
  mpi_engine(MPI_Comm world, bootstrap::rank_layout ranks, delivery& sink,
             std::size_t chunk_bytes = default_chunk_bytes);
  mpi_engine(const mpi_engine&) = delete;
  mpi_engine& operator=(const mpi_engine&) = delete;
  ~mpi_engine();

  // Starts `op` towards the process that owns op.target_rank (another process). `payload`
  // (op.size bytes) must stay untouched until sink.sent(op), unless it fits the header
  // (header_payload_bytes): then it is copied there, and may be reused once post returns.
  void post(const remote_operation& op, const void* payload);

  // Advances sends and receives; true when anything moved.
  bool progress();

  // What one process brought to a collective.
  struct contribution {
    std::int32_t call = 0;    // what the process is doing (the runtime checks they agree)
    std::vector<char> bytes;  // its data for the others
  };

  // Starts the next collective (every process calls them in the same order). Never blocks.
  void begin_collective(std::int32_t call, std::vector<char> bytes);
  // After begin_collective: every process's contribution (indexed by process, this one's
  // included) once the collective is complete here, as defined above; nullopt before.
  std::optional<std::vector<contribution>> finish_collective();
  // Processes whose announcement of the current collective has not arrived.
  std::vector<int> missing_processes() const;

  // Collective, blocking: returns once every operation posted anywhere before the call has been
  // delivered and every send has completed, on every process (it ends with a barrier, so no
  // operation posted after it is delivered before it returns anywhere).
  void quiesce();

 private:
  // A header message: the operation and, up to header_payload_bytes, its payload (one message
  // instead of two on the latency path).
  struct header_message {
    remote_operation op;
    char payload[header_payload_bytes];
  };
  // Kept behind a pointer and reused (spare_outgoing_): MPI reads the header from where it is until
  // the send completes, and on the latency path a fresh node and request list per operation were
  // two heap allocations.
  struct outgoing {
    header_message header;  // the header's send buffer
    MPI_Request header_request = MPI_REQUEST_NULL;
    std::vector<MPI_Request> chunk_requests;  // payload chunks (none on the latency path)
  };
  struct incoming {
    remote_operation op;
    void* landing = nullptr;            // where the payload goes
    std::vector<MPI_Request> requests;  // payload chunks
    bool refused = false;               // its chunks are drained into `drained`, never landed
    std::vector<char> drained;
  };

  using announcement = checks::announcement_head;
  struct received_announcement {
    std::int64_t headers_sent = 0;
    contribution data;
  };

  bool complete_sends();
  bool take_headers();
  bool take_announcements();
  bool accept_held();
  bool accept_held_from(std::size_t source);
  bool claim_payloads();
  bool claim_payloads_from(std::size_t source);
  bool deliver_landed();
  bool deliver_landed_from(std::size_t source);
  // Whether every chunk of `in` has arrived; each is checked (checks::check_payload_chunk) first.
  bool chunks_arrived(incoming& in, int source_process);
  void post_header_receive();
  checks::header_limits header_limits_from(int source_process) const;
  void accept(const header_message& header, int source_process);
  void receive_payload(incoming& in, int source_process, char* destination);
  std::size_t chunks_of(const remote_operation& op) const;

  // Teardown (~mpi_engine): the longest it waits for outstanding requests before it frees them.
  static constexpr std::chrono::milliseconds teardown_wait{1000};
  // Whether every request of `requests` completed within `bound` (polling MPI_Testall).
  static bool finish_within(std::vector<MPI_Request>& requests,
                            std::chrono::steady_clock::duration bound);
  // Keeps the buffers of requests freed while still pending for the rest of the process's life.
  static void keep_until_exit(
      std::deque<std::unique_ptr<outgoing>> outgoing, std::vector<std::deque<incoming>> incoming,
      std::deque<std::pair<std::vector<char>, std::vector<MPI_Request>>> announcing);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int process_index_ = 0;
  bootstrap::rank_layout ranks_;
  delivery& sink_;
  std::size_t chunk_bytes_;

  std::deque<std::unique_ptr<outgoing>> outgoing_;
  std::vector<std::unique_ptr<outgoing>> spare_outgoing_;  // completed, for the next posts
  std::vector<MPI_Status> chunk_statuses_;                 // chunks_arrived's, kept for reuse
  std::vector<std::deque<incoming>> incoming_;             // per source process, in issue order
  std::vector<std::deque<header_message>> held_;           // per source: headers not yet accepted
  // The payload chunks of held headers, claimed (MPI_Improbe) as they arrive. Left unclaimed
  // they would wait in MPI's unexpected-message queue, which every receive posted for the next
  // header scans from the front: with thousands of operations held (a delivery agent slower than
  // the link) each header cost hundreds of microseconds (docs/notes/performance-history.md, "The
  // all-ranks network stall").
  std::vector<std::deque<MPI_Message>> claimed_;  // per source, in arrival order
  std::vector<long long> chunks_owed_;  // per source: chunks of held headers not yet claimed
  header_message header_buffer_{};
  MPI_Request header_request_ = MPI_REQUEST_NULL;
  std::vector<long long> headers_sent_to_;        // per process
  std::vector<long long> headers_received_from_;  // per process
  std::vector<long long> delivered_from_;         // per process

  std::int64_t collectives_begun_ = 0;
  // Outside a collective of its own, the engine probes for others' announcements once per
  // this many progress calls.
  static constexpr std::uint32_t quiet_probe_interval = 256;
  std::uint32_t progress_calls_ = 0;
  contribution own_contribution_;
  // Announcements by collective sequence and process; later collectives' may arrive early.
  std::map<std::int64_t, std::vector<std::optional<received_announcement>>> announcements_;
  // Per process: the sequence its next announcement must carry, and what its last one counted
  // (checks::check_announcement).
  std::vector<std::int64_t> next_announcement_from_;
  std::vector<std::int64_t> headers_announced_by_;
  std::deque<std::pair<std::vector<char>, std::vector<MPI_Request>>> announcing_;  // being sent
};

}  // namespace dcuda::transport
