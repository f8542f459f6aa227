#include "transport/mpi_engine.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <cstring>
#include <string>
#include <thread>

#include "bootstrap/mpi_session.h"
#include "runtime/error.h"

namespace dcuda::transport {
namespace {

constexpr int header_tag = 1;

constexpr int payload_tag = 2;
constexpr int collective_tag = 3;

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
  DCUDA_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  DCUDA_MPI_CHECK(MPI_Comm_rank(comm_, &process_index_));
  // Both ends count an operation's chunks with their own chunk size: a difference would pair the
  // chunks of one operation with the receives of another.
  const long long chunk = static_cast<long long>(chunk_bytes_);
  long long extremes[2] = {chunk, -chunk};  // the largest, and minus the smallest
  DCUDA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_LONG_LONG, MPI_MAX, comm_));
  if (extremes[0] != chunk || -extremes[1] != chunk) {
    MPI_Comm_free(&comm_);
    throw runtime::error(DCUDA_ERROR_SETTING,
                         "mpi_engine: the processes chunk payloads differently (from " +
                             std::to_string(-extremes[1]) + " to " + std::to_string(extremes[0]) +
                             " bytes); DCUDA_NETWORK_CHUNK must be the same in every process");
  }
  int processes = 0;
  DCUDA_MPI_CHECK(MPI_Comm_size(comm_, &processes));
  incoming_.resize(static_cast<std::size_t>(processes));
  held_.resize(static_cast<std::size_t>(processes));
  claimed_.resize(static_cast<std::size_t>(processes));
  chunks_owed_.assign(static_cast<std::size_t>(processes), 0);
  headers_sent_to_.assign(static_cast<std::size_t>(processes), 0);
  headers_received_from_.assign(static_cast<std::size_t>(processes), 0);
  delivered_from_.assign(static_cast<std::size_t>(processes), 0);
  next_announcement_from_.assign(static_cast<std::size_t>(processes), 1);
  headers_announced_by_.assign(static_cast<std::size_t>(processes), 0);
  if (ranks_.rank_starts.size() != static_cast<std::size_t>(processes) + 1) {
    throw runtime::error("mpi_engine: the rank layout has " +
                         std::to_string(ranks_.rank_starts.size()) + " entries for " +
                         std::to_string(processes) + " processes");
  }
  post_header_receive();
}

// Teardown never waits for a peer: it may follow a failure, with a peer gone or stuck, and must
// not keep the process from ending (the error is printed before it, host_api.cpp). Receives are
// cancelled; sends cannot be (MPI 4.0 deprecates it, Open MPI never did it), so every request
// gets at most teardown_wait to complete, as they all do at once after quiesce. Those still
// pending then are freed (MPI may still complete them) and the memory they use is kept for the
// rest of the process's life, so that MPI never writes into or reads from freed memory. A
// failing MPI call here cannot be reported (an error may be on its way out already): teardown
// goes on without it. Messages claimed by MPI_Improbe (claimed_) belong to the communicator and
// go with it.
mpi_engine::~mpi_engine() {
  std::vector<MPI_Request> pending;
  const auto cancel = [&](MPI_Request& request) {
    if (request == MPI_REQUEST_NULL) return;
    MPI_Cancel(&request);
    pending.push_back(request);
  };
  cancel(header_request_);
  for (auto& from_source : incoming_) {
    for (incoming& in : from_source) {
      for (MPI_Request& request : in.requests) cancel(request);
    }
  }
  for (const auto& out : outgoing_) {
    if (out->header_request != MPI_REQUEST_NULL) pending.push_back(out->header_request);
    for (MPI_Request request : out->chunk_requests) {
      if (request != MPI_REQUEST_NULL) pending.push_back(request);
    }
  }
  for (const auto& [bytes, requests] : announcing_) {
    for (MPI_Request request : requests) {
      if (request != MPI_REQUEST_NULL) pending.push_back(request);
    }
  }
  if (!finish_within(pending, teardown_wait)) {
    for (MPI_Request& request : pending) {
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
    keep_until_exit(std::move(outgoing_), std::move(incoming_), std::move(announcing_));
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

bool mpi_engine::finish_within(std::vector<MPI_Request>& requests,
                               std::chrono::steady_clock::duration bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    int done = 0;
    if (requests.empty() || MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                                        MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
      return requests.empty();
    }
    if (done != 0) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void mpi_engine::keep_until_exit(
    std::deque<std::unique_ptr<outgoing>> outgoing, std::vector<std::deque<incoming>> incoming,
    std::deque<std::pair<std::vector<char>, std::vector<MPI_Request>>> announcing) {
  struct kept_buffers {
    std::deque<std::unique_ptr<mpi_engine::outgoing>> outgoing;
    std::vector<std::deque<mpi_engine::incoming>> incoming;
    std::deque<std::pair<std::vector<char>, std::vector<MPI_Request>>> announcing;
  };
  // Never freed, not even at exit: MPI may still use these buffers until it is finalised, which
  // may come after the destructors of static objects. Moving a deque or vector keeps its
  // elements where they are, which is what the requests point into.
  // A deque: adding one never moves (or, as a vector growing would for a type whose move may
  // throw, copies) those kept before.
  static auto& kept = *std::make_unique<std::deque<kept_buffers>>().release();
  static std::mutex kept_mutex;
  std::lock_guard<std::mutex> lock(kept_mutex);
  kept.push_back({std::move(outgoing), std::move(incoming), std::move(announcing)});
}

void mpi_engine::post_header_receive() {
  DCUDA_MPI_CHECK(MPI_Irecv(&header_buffer_, sizeof(header_message), MPI_BYTE, MPI_ANY_SOURCE,
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
  if (spare_outgoing_.empty()) {
    outgoing_.push_back(std::make_unique<outgoing>());
  } else {
    outgoing_.push_back(std::move(spare_outgoing_.back()));
    spare_outgoing_.pop_back();
  }
  outgoing& out = *outgoing_.back();  // stays where it is until the sends complete
  out.header.op = op;
  out.chunk_requests.clear();
  const auto size = static_cast<std::size_t>(op.size);
  const bool payload_inside = carries_payload(op) && size <= header_payload_bytes;
  if (payload_inside) std::memcpy(out.header.payload, payload, size);
  DCUDA_MPI_CHECK(MPI_Isend(
      &out.header, static_cast<int>(sizeof(remote_operation) + (payload_inside ? size : 0)),
      MPI_BYTE, target, header_tag, comm_, &out.header_request));
  ++headers_sent_to_[static_cast<std::size_t>(target)];
  if (!carries_payload(op) || payload_inside) return;
  const auto* bytes = static_cast<const char*>(payload);
  for (std::size_t at = 0; at < size; at += chunk_bytes_) {
    const int count = static_cast<int>(std::min(chunk_bytes_, size - at));
    out.chunk_requests.emplace_back();
    DCUDA_MPI_CHECK(MPI_Isend(bytes + at, count, MPI_BYTE, target, payload_tag, comm_,
                              &out.chunk_requests.back()));
  }
}

std::size_t mpi_engine::chunks_of(const remote_operation& op) const {
  const auto size = static_cast<std::size_t>(op.size);
  if (!carries_payload(op) || size <= header_payload_bytes) return 0;
  return (size + chunk_bytes_ - 1) / chunk_bytes_;
}

checks::header_limits mpi_engine::header_limits_from(int source_process) const {
  checks::header_limits limits;
  limits.source_process = source_process;
  limits.source_rank_start = ranks_.rank_start(source_process);
  limits.source_rank_count = ranks_.ranks_of(source_process);
  limits.target_rank_start = ranks_.rank_start(process_index_);
  limits.target_rank_count = ranks_.ranks_of(process_index_);
  limits.header_payload_bytes = header_payload_bytes;
  limits.max_payload_bytes = sink_.largest_payload();
  return limits;
}

void mpi_engine::accept(const header_message& header, int source_process) {
  const remote_operation& op = header.op;
  ++headers_received_from_[static_cast<std::size_t>(source_process)];
  incoming& in = incoming_[static_cast<std::size_t>(source_process)].emplace_back();
  in.op = op;
  if (!carries_payload(op)) return;
  auto* destination = static_cast<char*>(sink_.landing_address(op));
  in.landing = destination;
  const auto size = static_cast<std::size_t>(op.size);
  if (destination == nullptr) {
    // Its chunks are still received (into a buffer of its own), so that they are not taken for
    // the chunks of the next operation from the same source.
    in.refused = true;
    in.drained.resize(chunks_of(op) > 0 ? size : 0);
    receive_payload(in, source_process, in.drained.data());
    throw runtime::error(DCUDA_ERROR_PEER,
                         "mpi_engine: " + describe(op) + " was refused: " + sink_.refusal(op));
  }
  if (size <= header_payload_bytes) {
    std::memcpy(destination, header.payload, size);  // landed with its header
    return;
  }
  receive_payload(in, source_process, destination);
}

// The chunks of the oldest accepted operation are the next ones from its source: those already
// claimed first, then receives for those still to come.
void mpi_engine::receive_payload(incoming& in, int source_process, char* destination) {
  const auto source = static_cast<std::size_t>(source_process);
  const auto size = static_cast<std::size_t>(in.op.size);
  for (std::size_t chunk = 0; chunk < chunks_of(in.op); ++chunk) {
    const std::size_t at = chunk * chunk_bytes_;
    const int count = static_cast<int>(std::min(chunk_bytes_, size - at));
    in.requests.emplace_back();
    if (!claimed_[source].empty()) {
      DCUDA_MPI_CHECK(MPI_Imrecv(destination + at, count, MPI_BYTE, &claimed_[source].front(),
                                 &in.requests.back()));
      claimed_[source].pop_front();
    } else {
      DCUDA_MPI_CHECK(MPI_Irecv(destination + at, count, MPI_BYTE, source_process, payload_tag,
                                comm_, &in.requests.back()));
      --chunks_owed_[source];
    }
  }
}

// Each header is offered to the sink at once (on the latency path it is accepted and its receives
// are posted); one that stays held has its payload claimed at once, so that the receive of the
// following header scans at most this operation's chunks.
bool mpi_engine::take_headers() {
  bool any = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    DCUDA_MPI_CHECK(MPI_Test(&header_request_, &arrived, &status));
    if (!arrived) return any;
    any = true;
    int received = 0;
    DCUDA_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &received));
    const auto source = static_cast<std::size_t>(status.MPI_SOURCE);
    const header_message header = header_buffer_;
    post_header_receive();  // first: the checks and accept may throw
    // Before anything is set aside or indexed for it: a short message would otherwise leave the
    // previous header's fields in place, and a bad target or tag would reach the sink.
    const std::string problem = checks::check_operation_header(
        std::span(reinterpret_cast<const std::byte*>(&header), static_cast<std::size_t>(received)),
        header_limits_from(status.MPI_SOURCE));
    if (!problem.empty()) throw runtime::error(DCUDA_ERROR_PEER, "mpi_engine: " + problem);
    held_[source].push_back(header);
    chunks_owed_[source] += static_cast<long long>(chunks_of(header.op));
    accept_held_from(source);
    claim_payloads_from(source);
    // A header without separate chunks has landed already: hand it on now rather than after
    // another MPI_Test of the header receive (a few hundred ns on the latency path).
    deliver_landed_from(source);
  }
}

bool mpi_engine::accept_held_from(std::size_t source) {
  bool any = false;
  auto& held = held_[source];
  while (!held.empty() && sink_.ready_for(held.front().op)) {
    const header_message header = held.front();
    held.pop_front();  // before accept, which may throw: the engine stays consistent
    accept(header, static_cast<int>(source));
    any = true;
  }
  return any;
}

bool mpi_engine::accept_held() {
  bool any = false;
  for (std::size_t p = 0; p < held_.size(); ++p) any = accept_held_from(p) || any;
  return any;
}

bool mpi_engine::claim_payloads_from(std::size_t source) {
  bool any = false;
  while (chunks_owed_[source] > 0) {
    int found = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    DCUDA_MPI_CHECK(MPI_Improbe(static_cast<int>(source), payload_tag, comm_, &found, &message,
                                MPI_STATUS_IGNORE));
    if (!found) break;
    claimed_[source].push_back(message);
    --chunks_owed_[source];
    any = true;
  }
  return any;
}

// Chunks of held headers that arrived after their header was taken.
bool mpi_engine::claim_payloads() {
  bool any = false;
  for (std::size_t p = 0; p < claimed_.size(); ++p) any = claim_payloads_from(p) || any;
  return any;
}

bool mpi_engine::deliver_landed_from(std::size_t source) {
  bool any = false;
  auto& from_source = incoming_[source];
  while (!from_source.empty() && chunks_arrived(from_source.front(), static_cast<int>(source))) {
    if (!from_source.front().refused) {
      sink_.landed(from_source.front().op, from_source.front().landing);
    }
    from_source.pop_front();
    ++delivered_from_[source];
    any = true;
  }
  return any;
}

bool mpi_engine::chunks_arrived(incoming& in, int source_process) {
  if (in.requests.empty()) return true;
  const auto chunks = in.requests.size();
  chunk_statuses_.resize(chunks);
  int done = 0;
  const int result =
      MPI_Testall(static_cast<int>(chunks), in.requests.data(), &done, chunk_statuses_.data());
  const auto size = static_cast<std::size_t>(in.op.size);
  const auto due = [&](std::size_t chunk) {
    return static_cast<std::int64_t>(std::min(chunk_bytes_, size - chunk * chunk_bytes_));
  };
  if (result == MPI_ERR_IN_STATUS) {
    // A chunk longer than its receive: MPI reports it as truncated, in that chunk's status.
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
      int error_class = MPI_SUCCESS;
      MPI_Error_class(chunk_statuses_[chunk].MPI_ERROR, &error_class);
      if (error_class == MPI_ERR_TRUNCATE) {
        throw runtime::error(DCUDA_ERROR_PEER, "mpi_engine: " + checks::check_payload_chunk(
                                                                    in.op, source_process, chunk,
                                                                    chunks, -1, due(chunk)));
      }
    }
  }
  if (result != MPI_SUCCESS) bootstrap::throw_mpi_error(result, "MPI_Testall (payload chunks)");
  if (done == 0) return false;
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    int received = 0;
    DCUDA_MPI_CHECK(MPI_Get_count(&chunk_statuses_[chunk], MPI_BYTE, &received));
    const std::string problem =
        checks::check_payload_chunk(in.op, source_process, chunk, chunks, received, due(chunk));
    if (!problem.empty()) throw runtime::error(DCUDA_ERROR_PEER, "mpi_engine: " + problem);
  }
  return true;
}

bool mpi_engine::deliver_landed() {
  bool any = false;
  for (std::size_t p = 0; p < incoming_.size(); ++p) any = deliver_landed_from(p) || any;
  return any;
}

bool mpi_engine::complete_sends() {
  bool any = false;
  while (!outgoing_.empty()) {
    outgoing& out = *outgoing_.front();
    if (out.header_request != MPI_REQUEST_NULL) {
      int done = 0;
      DCUDA_MPI_CHECK(MPI_Test(&out.header_request, &done, MPI_STATUS_IGNORE));
      if (done == 0) break;
    }
    if (!all_done(out.chunk_requests)) break;
    sink_.sent(out.header.op);
    spare_outgoing_.push_back(std::move(outgoing_.front()));
    outgoing_.pop_front();
    any = true;
  }
  return any;
}

bool mpi_engine::progress() {
  const bool headers = take_headers();
  const bool accepted = accept_held();
  const bool claimed = claim_payloads();
  const bool landed = deliver_landed();
  const bool sent = complete_sends();
  // Probing for announcements is an MPI call with progress of its own (a few hundred ns) on the
  // latency path; others' announcements wait safely in MPI's queue until this process begins the
  // same collective, so outside one they are taken only now and then.
  const bool in_collective = announcements_.contains(collectives_begun_);
  const bool announced =
      (in_collective || ++progress_calls_ % quiet_probe_interval == 0) && take_announcements();
  return headers || accepted || claimed || landed || sent || announced;
}

void mpi_engine::begin_collective(std::int32_t call, std::vector<char> bytes) {
  const std::int64_t sequence = ++collectives_begun_;
  own_contribution_ = contribution{call, std::move(bytes)};
  auto& arrived = announcements_[sequence];
  arrived.resize(incoming_.size());
  for (std::size_t p = 0; p < incoming_.size(); ++p) {
    if (static_cast<int>(p) == process_index_) continue;
    auto& [message, requests] = announcing_.emplace_back();
    const announcement head{sequence, headers_sent_to_[p], call, 0};
    message.resize(sizeof head + own_contribution_.bytes.size());
    std::memcpy(message.data(), &head, sizeof head);
    if (!own_contribution_.bytes.empty()) {
      std::memcpy(message.data() + sizeof head, own_contribution_.bytes.data(),
                  own_contribution_.bytes.size());
    }
    requests.emplace_back();
    DCUDA_MPI_CHECK(MPI_Isend(message.data(), static_cast<int>(message.size()), MPI_BYTE,
                              static_cast<int>(p), collective_tag, comm_, &requests.back()));
  }
}

bool mpi_engine::take_announcements() {
  bool any = false;
  while (!announcing_.empty() && all_done(announcing_.front().second)) {
    announcing_.pop_front();
    any = true;
  }
  for (;;) {
    int found = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    DCUDA_MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, collective_tag, comm_, &found, &message, &status));
    if (!found) return any;
    any = true;
    int bytes = 0;
    DCUDA_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &bytes));
    std::vector<char> buffer(static_cast<std::size_t>(bytes));
    // The message is matched and the sender keeps progressing, so this completes.
    DCUDA_MPI_CHECK(MPI_Mrecv(buffer.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE));
    const auto source = static_cast<std::size_t>(status.MPI_SOURCE);
    checks::announcement_limits limits;
    limits.source_process = status.MPI_SOURCE;
    limits.expected_sequence = next_announcement_from_[source];
    limits.latest_sequence = collectives_begun_ + 1;
    limits.headers_sent_before = headers_announced_by_[source];
    const std::string problem = checks::check_announcement(
        std::span(reinterpret_cast<const std::byte*>(buffer.data()), buffer.size()), limits);
    if (!problem.empty()) throw runtime::error(DCUDA_ERROR_PEER, "mpi_engine: " + problem);
    announcement head{};
    std::memcpy(&head, buffer.data(), sizeof head);
    ++next_announcement_from_[source];
    headers_announced_by_[source] = head.headers_sent;
    auto& arrived = announcements_[head.sequence];
    arrived.resize(incoming_.size());
    received_announcement& entry = arrived[source].emplace();
    entry.headers_sent = head.headers_sent;
    entry.data.call = head.call;
    entry.data.bytes.assign(buffer.begin() + sizeof head, buffer.end());
  }
}

std::optional<std::vector<mpi_engine::contribution>> mpi_engine::finish_collective() {
  progress();
  const auto current = announcements_.find(collectives_begun_);
  if (current == announcements_.end()) {
    throw runtime::error("mpi_engine: finish_collective called before begin_collective");
  }
  const auto& arrived = current->second;
  for (std::size_t p = 0; p < arrived.size(); ++p) {
    if (static_cast<int>(p) == process_index_) continue;
    if (!arrived[p] || delivered_from_[p] < arrived[p]->headers_sent) return std::nullopt;
  }
  if (!outgoing_.empty()) return std::nullopt;
  std::vector<contribution> all(arrived.size());
  for (std::size_t p = 0; p < arrived.size(); ++p) {
    all[p] = static_cast<int>(p) == process_index_ ? std::move(own_contribution_)
                                                   : std::move(current->second[p]->data);
  }
  announcements_.erase(current);
  return all;
}

std::vector<int> mpi_engine::missing_processes() const {
  std::vector<int> missing;
  const auto current = announcements_.find(collectives_begun_);
  if (current == announcements_.end()) return missing;
  for (std::size_t p = 0; p < current->second.size(); ++p) {
    if (static_cast<int>(p) != process_index_ && !current->second[p]) {
      missing.push_back(static_cast<int>(p));
    }
  }
  return missing;
}

void mpi_engine::quiesce() {
  begin_collective(0, {});
  while (!finish_collective()) std::this_thread::yield();
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
