#include "transport/mpi_engine.h"

#include <algorithm>
#include <string>
#include <thread>

#include "bootstrap/mpi_session.h"
#include "runtime/error.h"

namespace dcuda::transport {
namespace {

constexpr int header_tag = 1;

// A wait that found nothing to do lets other processes run: on an oversubscribed machine a
// transfer needs both ends scheduled.
void progress_or_yield(mpi_engine& engine) {
  if (!engine.progress()) std::this_thread::yield();
}
constexpr int payload_tag = 2;

std::string describe(const remote_operation& op) {
  return "operation " + std::to_string(op.operation_id) + " of rank " +
         std::to_string(op.source_rank) + " to rank " + std::to_string(op.target_rank) +
         " (window " + std::to_string(op.window) + ", offset " + std::to_string(op.offset) +
         ", size " + std::to_string(op.size) + ")";
}

bool all_done(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return true;
  int done = 0;
  DCUDA_MPI_CHECK(
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE));
  return done != 0;
}

}  // namespace

mpi_engine::mpi_engine(MPI_Comm world, bootstrap::rank_layout ranks, delivery& sink,
                       std::size_t chunk_bytes)
    : ranks_(std::move(ranks)), sink_(sink), chunk_bytes_(chunk_bytes) {
  if (chunk_bytes_ == 0 || chunk_bytes_ > static_cast<std::size_t>(1) << 30) {
    throw runtime::error("mpi_engine: chunk size " + std::to_string(chunk_bytes_) +
                         " is outside 1..2^30 bytes");
  }
  DCUDA_MPI_CHECK(MPI_Comm_dup(world, &comm_));
  DCUDA_MPI_CHECK(MPI_Comm_rank(comm_, &process_index_));
  int processes = 0;
  DCUDA_MPI_CHECK(MPI_Comm_size(comm_, &processes));
  incoming_.resize(static_cast<std::size_t>(processes));
  headers_sent_to_.assign(static_cast<std::size_t>(processes), 0);
  headers_received_from_.assign(static_cast<std::size_t>(processes), 0);
  post_header_receive();
}

mpi_engine::~mpi_engine() {
  if (header_request_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&header_request_);
    MPI_Wait(&header_request_, MPI_STATUS_IGNORE);
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void mpi_engine::post_header_receive() {
  DCUDA_MPI_CHECK(MPI_Irecv(&header_buffer_, sizeof(remote_operation), MPI_BYTE, MPI_ANY_SOURCE,
                            header_tag, comm_, &header_request_));
}

void mpi_engine::post(const remote_operation& op, const void* payload) {
  if (op.target_rank < 0 || op.target_rank >= ranks_.world_size() || op.size < 0) {
    throw runtime::error("mpi_engine: " + describe(op) + " names no rank or has a negative size");
  }
  const int target = ranks_.process_of(op.target_rank);
  if (target == process_index_) {
    throw runtime::error("mpi_engine: " + describe(op) +
                         " targets this process; the device delivers those itself");
  }
  outgoing& out = outgoing_.emplace_back();  // deque: the header buffer stays where it is
  out.op = op;
  out.requests.emplace_back();
  DCUDA_MPI_CHECK(MPI_Isend(&out.op, sizeof(remote_operation), MPI_BYTE, target, header_tag, comm_,
                            &out.requests.back()));
  ++headers_sent_to_[static_cast<std::size_t>(target)];
  if (!carries_payload(op)) return;
  const auto* bytes = static_cast<const char*>(payload);
  const auto size = static_cast<std::size_t>(op.size);
  for (std::size_t at = 0; at < size; at += chunk_bytes_) {
    const int count = static_cast<int>(std::min(chunk_bytes_, size - at));
    out.requests.emplace_back();
    DCUDA_MPI_CHECK(
        MPI_Isend(bytes + at, count, MPI_BYTE, target, payload_tag, comm_, &out.requests.back()));
  }
}

void mpi_engine::accept(const remote_operation& op, int source_process) {
  ++headers_received_from_[static_cast<std::size_t>(source_process)];
  incoming& in = incoming_[static_cast<std::size_t>(source_process)].emplace_back();
  in.op = op;
  if (!carries_payload(op)) return;
  auto* destination = static_cast<char*>(sink_.landing_address(op));
  if (destination == nullptr) {
    throw runtime::error("mpi_engine: " + describe(op) +
                         " does not fit the target's window; it was refused");
  }
  const auto size = static_cast<std::size_t>(op.size);
  for (std::size_t at = 0; at < size; at += chunk_bytes_) {
    const int count = static_cast<int>(std::min(chunk_bytes_, size - at));
    in.requests.emplace_back();
    DCUDA_MPI_CHECK(MPI_Irecv(destination + at, count, MPI_BYTE, source_process, payload_tag, comm_,
                              &in.requests.back()));
  }
}

bool mpi_engine::take_headers() {
  bool any = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    DCUDA_MPI_CHECK(MPI_Test(&header_request_, &arrived, &status));
    if (!arrived) return any;
    any = true;
    const remote_operation op = header_buffer_;
    post_header_receive();  // before accept, which may throw: the engine stays consistent
    accept(op, status.MPI_SOURCE);
  }
}

bool mpi_engine::deliver_landed() {
  bool any = false;
  for (auto& from_source : incoming_) {
    while (!from_source.empty() && all_done(from_source.front().requests)) {
      if (notifies(from_source.front().op)) sink_.notify(from_source.front().op);
      from_source.pop_front();
      any = true;
    }
  }
  return any;
}

bool mpi_engine::complete_sends() {
  bool any = false;
  while (!outgoing_.empty() && all_done(outgoing_.front().requests)) {
    sink_.sent(outgoing_.front().op);
    outgoing_.pop_front();
    any = true;
  }
  return any;
}

bool mpi_engine::progress() {
  const bool headers = take_headers();
  const bool landed = deliver_landed();
  const bool sent = complete_sends();
  return headers || landed || sent;
}

void mpi_engine::quiesce() {
  // How many headers each process sent to this one, exchanged without blocking: a peer may need
  // this process to post a payload receive before its own sends can complete.
  std::vector<long long> expected(headers_sent_to_.size(), 0);
  MPI_Request exchange = MPI_REQUEST_NULL;
  DCUDA_MPI_CHECK(MPI_Ialltoall(headers_sent_to_.data(), 1, MPI_LONG_LONG, expected.data(), 1,
                                MPI_LONG_LONG, comm_, &exchange));
  int exchanged = 0;
  while (!exchanged) {
    progress_or_yield(*this);
    DCUDA_MPI_CHECK(MPI_Test(&exchange, &exchanged, MPI_STATUS_IGNORE));
  }
  const auto everything_arrived = [&] {
    for (std::size_t p = 0; p < expected.size(); ++p) {
      if (headers_received_from_[p] < expected[p] || !incoming_[p].empty()) return false;
    }
    return outgoing_.empty();
  };
  while (!everything_arrived()) progress_or_yield(*this);
  // Nobody posts again before everybody is done. The wait does not progress the engine: a
  // process that leaves the barrier first may already post its next operations, and taking them
  // here would deliver them before this quiesce returns. Nothing needs progress meanwhile: every
  // process that entered the barrier has delivered and completed all of its own traffic.
  MPI_Request everyone_done = MPI_REQUEST_NULL;
  DCUDA_MPI_CHECK(MPI_Ibarrier(comm_, &everyone_done));
  int done = 0;
  for (;;) {
    DCUDA_MPI_CHECK(MPI_Test(&everyone_done, &done, MPI_STATUS_IGNORE));
    if (done) break;
    std::this_thread::yield();
  }
}

}  // namespace dcuda::transport
