#include "runtime/network_proxy.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "dcuda/detail/protocol/calls.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/notification_counters.h"
#include "runtime/error.h"
#include "runtime/error_text.h"
#include "transport/message_checks.h"

namespace dcuda::runtime {
namespace {

using protocol::remote_operation;

constexpr std::size_t operation_bytes = sizeof(remote_operation) + sizeof(std::uint64_t);
static_assert(operation_bytes <= protocol::entry_payload_bytes,
              "a remote operation and its source address fill the first entry");

}  // namespace

network_proxy::network_proxy(const process_paths& paths, const bootstrap::rank_layout& ranks,
                             const shared_memory_mappings& shared_memory, device_buffers& buffers,
                             pinned_pool& outgoing, pinned_pool& incoming,
                             const std::string& trace_prefix, std::size_t chunk_bytes)
    : piece_bytes_(chunk_bytes),
      buffers_(buffers),
      shape_(buffers.shape()),
      outgoing_pool_(outgoing),
      incoming_pool_(incoming),
      agent_(buffers.uses_network() ? buffers.delivery_queue() : nullptr),
      small_landings_(protocol::delivery_queue_slots),
      collectives_(paths, ranks, shared_memory, buffers),
      trace_(trace_prefix, shape_.process_index),
      engine_(paths.world, ranks, *this, chunk_bytes) {
  static_assert(protocol::delivery_inline_bytes <= sizeof(std::uint64_t));
  // An inline payload is staged whole; every payload must fit the incoming staging
  // (largest_payload).
  if (piece_bytes_ < static_cast<std::size_t>(protocol::inline_put_limit) ||
      !incoming_pool_.can_take(piece_bytes_) || !outgoing_pool_.can_take(piece_bytes_)) {
    throw error("host proxy: a network chunk of " + std::to_string(piece_bytes_) +
                " bytes does not fit between an inline put and the pinned staging");
  }
  free_small_landings_.reserve(small_landings_.size());
  for (std::uint32_t slot = 0; slot < small_landings_.size(); ++slot) {
    free_small_landings_.push_back(slot);
  }
}

void network_proxy::take_world_collective(const channel_message& message) {
  collectives_.take(message);
}

std::string network_proxy::waiting_for() const {
  return collectives_.waiting_for();
}

// ---- outgoing ----

void network_proxy::take_operation(const channel_message& message) {
  if (message.text.size() < operation_bytes) {
    throw error("host proxy: a remote operation from rank " + std::to_string(message.rank) +
                " is truncated");
  }
  waiting_operation waiting;
  std::memcpy(&waiting.op, message.text.data(), sizeof waiting.op);
  std::memcpy(&waiting.source, message.text.data() + sizeof waiting.op, sizeof waiting.source);
  // Before anything is staged or posted: the proxy indexes its per-rank state by the source rank
  // and the engine the processes by the target.
  checks::channel_limits limits;
  limits.rank_start = shape_.rank_start;
  limits.rank_count = shape_.device_ranks;
  limits.world_size = shape_.world_size;
  const std::string problem = checks::check_channel_operation(waiting.op, message.rank, limits);
  if (!problem.empty()) throw error("host proxy: " + problem);
  trace_.record(network_trace::hop::taken, waiting.op);
  const auto size = static_cast<std::size_t>(waiting.op.size);
  if (protocol::carries_payload(waiting.op) && waiting.op.size <= protocol::inline_put_limit) {
    // Inline: the payload follows the first entry.
    const std::size_t inline_at = protocol::entry_payload_bytes;
    if (message.text.size() < inline_at + size) {
      throw error("host proxy: the inline payload of rank " +
                  std::to_string(waiting.op.source_rank) + " is truncated");
    }
    waiting.inline_payload = message.text.substr(inline_at, size);
  }
  waiting_.push_back(std::move(waiting));
  admit_waiting();
}

bool network_proxy::admit_waiting() {
  bool any = false;
  while (!waiting_.empty()) {
    waiting_operation& waiting = waiting_.front();
    const remote_operation& op = waiting.op;
    const int device_rank = op.source_rank - shape_.rank_start;
    const auto size = static_cast<std::size_t>(op.size);
    if (!protocol::carries_payload(op)) {
      to_post_.push_back(outgoing_step{op, {}, {}, std::nullopt, device_rank, 0, true});
    } else if (size <= transport::mpi_engine::header_payload_bytes) {
      // The engine copies it into the header message when it posts: no staging.
      to_post_.push_back(outgoing_step{
          op, {}, std::move(waiting.inline_payload), std::nullopt, device_rank, 0, true});
    } else if (op.size <= protocol::inline_put_limit) {
      std::optional<pinned_pool::buffer> payload = outgoing_pool_.take(size);
      if (!payload) return any;
      std::memcpy(payload->data(), waiting.inline_payload.data(), size);
      to_post_.push_back(
          outgoing_step{op, std::move(*payload), {}, std::nullopt, device_rank, 0, true});
    } else {
      // Staged in pieces; every piece but the last is a plain put, so the notification (if any)
      // comes with the last one, after all the data.
      while (waiting.next < size) {
        const std::size_t at = waiting.next;
        const std::size_t bytes = std::min(piece_bytes_, size - at);
        // Not the queue slots that accepted incoming operations have set aside.
        if (!agent_.has_room(reserved_jobs_ + 1)) return any;
        std::optional<pinned_pool::buffer> payload = outgoing_pool_.take(bytes);
        if (!payload) return any;
        const bool last = at + bytes == size;
        remote_operation piece = op;
        if (!last) piece.kind = static_cast<std::int32_t>(protocol::operation_kind::put);
        piece.offset = op.offset + static_cast<std::int64_t>(at);
        piece.size = static_cast<std::int64_t>(bytes);
        const std::uint32_t copy_job = agent_.copy_from_device(
            payload->data(), reinterpret_cast<const char*>(waiting.source) + at, bytes);
        to_post_.push_back(outgoing_step{piece,
                                         std::move(*payload),
                                         {},
                                         copy_job,
                                         device_rank,
                                         last ? op.operation_id : 0u,
                                         true});
        waiting.next += bytes;
        any = true;
      }
    }
    waiting_.pop_front();
    any = true;
  }
  return any;
}

void network_proxy::take_ping(int world_rank, std::uint32_t acknowledgement) {
  outgoing_step ping;
  ping.device_rank = world_rank - shape_.rank_start;
  ping.acknowledgement = acknowledgement;
  ping.post = false;
  to_post_.push_back(std::move(ping));
}

bool network_proxy::post_ready() {
  bool any = false;
  while (!to_post_.empty()) {
    outgoing_step& step = to_post_.front();
    if (step.copy_job && !agent_.finished(*step.copy_job)) break;
    if (step.post) {
      engine_.post(step.op,
                   step.header_payload.empty() ? step.payload.data() : step.header_payload.data());
      trace_.record(network_trace::hop::posted, step.op);
      in_flight_.push_back(std::move(step.payload));
    }
    if (step.acknowledgement != 0) {
      protocol::system_atomic<std::uint32_t>(buffers_.host_acks()[step.device_rank])
          .store(step.acknowledgement, cuda::memory_order_release);
    }
    to_post_.pop_front();
    any = true;
  }
  return any;
}

void network_proxy::sent(const remote_operation& /*op*/) {
  in_flight_.pop_front();  // reported in posting order: the front is this operation's payload
}

// ---- incoming ----

// Whether the payload of `op` is small enough to travel inside the agent's job (it lands in one
// of small_landings_, not in pinned staging).
bool network_proxy::lands_small(const remote_operation& op) {
  // Compared as 64-bit: a size of 2^32 + 1 is not small.
  return op.size <= static_cast<std::int64_t>(protocol::delivery_inline_bytes);
}

std::int64_t network_proxy::largest_payload() const {
  return static_cast<std::int64_t>(piece_bytes_);
}

bool network_proxy::ready_for(const remote_operation& op) {
  // A window that another process already uses may still be in creation here: hold the
  // operation until this process's part of the collective is done.
  // A slot of the agent's queue for its job (copy, count, or both in one), set aside until it
  // lands.
  if (!agent_.has_room(reserved_jobs_ + 1)) return false;
  if (protocol::carries_payload(op)) {
    // Staging for the payload: otherwise wait until deliveries give buffers back.
    if (!lands_small(op) && !incoming_pool_.can_take(static_cast<std::size_t>(op.size))) {
      return false;
    }
    if (collectives_.holds(op)) return false;
  }
  ++reserved_jobs_;
  trace_.record(network_trace::hop::arrived, op);
  return true;
}

void* network_proxy::landing_address(const remote_operation& op) {
  const int device_rank = op.target_rank - shape_.rank_start;
  if (device_rank < 0 || device_rank >= shape_.device_ranks || op.window < 0 ||
      op.window >= protocol::max_windows) {
    return nullptr;
  }
  const protocol::window_entry& window = collectives_.own_window(op.window, device_rank);
  if (window.generation == 0 || !protocol::range_inside_window(op.offset, op.size, window.size)) {
    return nullptr;
  }
  if (lands_small(op)) {
    if (free_small_landings_.empty()) {
      throw error("host proxy: more small payloads in flight than the agent's queue holds");
    }
    const std::uint32_t slot = free_small_landings_.back();
    free_small_landings_.pop_back();
    return &small_landings_[slot];
  }
  std::optional<pinned_pool::buffer> landing =
      incoming_pool_.take(static_cast<std::size_t>(op.size));
  if (!landing) throw error("host proxy: no staging for " + std::to_string(op.size) + " bytes");
  void* address = landing->data();
  landings_.emplace(address, std::move(*landing));
  return address;
}

void network_proxy::landed(const remote_operation& op, void* landing) {
  --reserved_jobs_;  // set aside by ready_for
  const int device_rank = op.target_rank - shape_.rank_start;
  std::uint32_t* counter = nullptr;
  if (protocol::notifies(op)) {
    counter = buffers_.device_notifications() +
              protocol::counter_index(static_cast<std::uint32_t>(device_rank),
                                      static_cast<std::uint32_t>(op.tag));
  }
  if (!protocol::carries_payload(op)) {
    if (counter != nullptr) agent_.count(counter);
    trace_.record(network_trace::hop::to_agent, op);
    return;
  }
  // One job: the data, then the count. A small payload travels in the job, so its slot is free
  // again at once; a larger one's staging goes back once the agent has copied it.
  const protocol::window_entry& window = collectives_.own_window(op.window, device_rank);
  auto* destination = reinterpret_cast<char*>(window.base) + op.offset;
  const std::uint32_t job =
      agent_.copy_from_host(destination, landing, static_cast<std::size_t>(op.size), counter);
  if (lands_small(op)) {
    free_small_landings_.push_back(
        static_cast<std::uint32_t>(static_cast<std::uint64_t*>(landing) - small_landings_.data()));
  } else {
    const auto found = landings_.find(landing);
    delivering_.push_back(delivery_step{job, std::move(found->second)});
    landings_.erase(found);
  }
  trace_.record(network_trace::hop::to_agent, op);
}

bool network_proxy::finish_deliveries() {
  bool any = false;
  while (!delivering_.empty() && agent_.finished(delivering_.front().job)) {
    delivering_.pop_front();  // the landing buffer goes back to the pool
    any = true;
  }
  return any;
}

bool network_proxy::progress() {
  bool any = admit_waiting();
  any = post_ready() || any;
  any = engine_.progress() || any;
  any = finish_deliveries() || any;
  any = collectives_.advance(engine_, waiting_.empty() && to_post_.empty(), [this] {
    return agent_.all_finished();
  }) || any;
  return any;
}

}  // namespace dcuda::runtime
