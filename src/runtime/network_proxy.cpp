#include "runtime/network_proxy.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <utility>

#include "dcuda/detail/protocol/calls.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/notification_counters.h"
#include "datatypes/layout_wire.h"
#include "datatypes/type_registry.h"
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
                             pinned_pool& outgoing, pinned_pool& incoming, pinned_pool& layouts,
                             host_window_landing host_windows, const std::string& trace_prefix,
                             std::size_t chunk_bytes)
    : piece_bytes_(chunk_bytes),
      buffers_(buffers),
      shape_(buffers.shape()),
      ranks_(ranks),
      outgoing_pool_(outgoing),
      incoming_pool_(incoming),
      agent_(buffers.uses_network() ? buffers.delivery_queue() : nullptr),
      small_landings_(protocol::delivery_queue_slots),
      layouts_received_(layouts),
      host_windows_(std::move(host_windows)),
      collectives_(paths, ranks, shared_memory, buffers),
      trace_(trace_prefix, shape_.process_index),
      engine_(paths.world, ranks, *this, chunk_bytes) {
  static_assert(protocol::delivery_inline_bytes <= sizeof(std::uint64_t));
  // An inline payload is staged whole; every payload must fit the incoming staging
  // (largest_payload).
  // A typed piece carries its header and at least one byte.
  if (piece_bytes_ < static_cast<std::size_t>(protocol::inline_put_limit) ||
      piece_bytes_ <= protocol::typed_piece_header_bytes ||
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
  if (protocol::typed_piece(waiting.op)) {
    take_typed_request(waiting, message);
  } else if (protocol::carries_payload(waiting.op) &&
             waiting.op.size <= protocol::inline_put_limit) {
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

// The second entry of a typed put's message (protocol/typed_piece.h). It came from the GPU: both
// types are looked up in this process's registry, and the sizes checked, before anything is
// packed.
void network_proxy::take_typed_request(waiting_operation& waiting, const channel_message& message) {
  const remote_operation& op = waiting.op;
  const char* call =
      op.kind == static_cast<std::int32_t>(protocol::operation_kind::typed_put_notify)
          ? "dcuda_put_notify_typed"
          : "dcuda_put_typed";
  const auto from_rank = [&] {
    return "host proxy: rank " + std::to_string(op.source_rank) + " handed over " + call;
  };
  protocol::typed_put_request request{};
  if (message.text.size() < protocol::entry_payload_bytes + sizeof request) {
    throw error(from_rank() + " in a message of " + std::to_string(message.text.size()) +
                " bytes; it has " + std::to_string(protocol::entry_payload_bytes + sizeof request));
  }
  std::memcpy(&request, message.text.data() + protocol::entry_payload_bytes, sizeof request);
  datatypes::type_registry& registry = datatypes::type_registry::instance();
  const dcuda_datatype source_type{request.source_type_id, request.source_type_generation};
  const dcuda_datatype target_type{request.target_type_id, request.target_type_generation};
  // Both throw, naming the call and the handle, for a type that is not committed here.
  const auto source = registry.layout(source_type, call);
  const auto target = registry.layout(target_type, call);
  const auto bytes_of = [](std::int32_t count, const datatypes::built_layout& built) {
    return count < 0 || !protocol::typed_span_fits(built.layout, static_cast<std::uint64_t>(count))
               ? std::optional<std::uint64_t>{}
               : std::optional<std::uint64_t>{static_cast<std::uint64_t>(count) *
                                              built.layout.size};
  };
  const std::optional<std::uint64_t> source_bytes = bytes_of(request.source_count, *source);
  const std::optional<std::uint64_t> target_bytes = bytes_of(request.target_count, *target);
  if (!source_bytes || !target_bytes || *source_bytes != *target_bytes ||
      *source_bytes != static_cast<std::uint64_t>(op.size)) {
    throw error(from_rank() + " of " + std::to_string(op.size) + " bytes for " +
                std::to_string(request.source_count) + " source and " +
                std::to_string(request.target_count) + " target elements of " +
                std::to_string(source->layout.size) + " and " +
                std::to_string(target->layout.size) + " bytes: the sizes do not agree");
  }
  typed_outgoing typed;
  typed.source_layout =
      reinterpret_cast<std::uint64_t>(&buffers_.type_table()[source_type.id].layout);
  typed.target_type = target_type;
  // The target's process gets the layout once per run, before the first piece that needs it.
  const int process = ranks_.process_of(op.target_rank);
  if (layouts_sent_.emplace(process, target_type.id, target_type.generation).second) {
    typed.encoded_layout = datatypes::encode_layout(*registry.flat(target_type, call));
    // A type past what a receiver takes (layout_wire.h) fails here, named, not over there.
    std::string problem;
    if (!datatypes::decode_layout(std::as_bytes(std::span(typed.encoded_layout)), problem)) {
      throw error(DCUDA_ERROR_INVALID_ARGUMENT,
                  from_rank() + " with the target type " + datatypes::handle_text(target_type) +
                      ", which cannot travel to another process: " + problem);
    }
  }
  waiting.typed = std::move(typed);
}

bool network_proxy::admit_typed(waiting_operation& waiting, int device_rank) {
  constexpr std::size_t head = protocol::typed_piece_header_bytes;
  typed_outgoing& typed = *waiting.typed;
  const remote_operation& op = waiting.op;
  const std::vector<char>& encoded = typed.encoded_layout;
  while (typed.layout_next < encoded.size()) {
    const std::size_t at = typed.layout_next;
    const std::size_t bytes = std::min(piece_bytes_ - head, encoded.size() - at);
    std::optional<pinned_pool::buffer> payload = outgoing_pool_.take(head + bytes);
    if (!payload) return false;
    const protocol::layout_part_header part{typed.target_type.id, typed.target_type.generation,
                                            encoded.size(), at, 0};
    std::memcpy(payload->data(), &part, head);
    std::memcpy(payload->data() + head, encoded.data() + at, bytes);
    remote_operation layout = op;
    layout.kind = static_cast<std::int32_t>(protocol::operation_kind::type_layout);
    layout.window = 0;
    layout.offset = 0;
    layout.size = static_cast<std::int64_t>(head + bytes);
    layout.tag = 0;
    to_post_.push_back(outgoing_step{
        layout, std::move(*payload), {}, std::nullopt, device_rank, 0, true, std::nullopt});
    typed.layout_next += bytes;
  }
  // The pieces: an empty put is one piece without data (its notification still goes).
  const auto size = static_cast<std::size_t>(op.size);
  while (typed.pieces == 0 || waiting.next < size) {
    const std::size_t at = waiting.next;
    const std::size_t bytes = std::min(piece_bytes_ - head, size - at);
    if (!agent_.has_room(reserved_jobs_ + 1)) return false;
    std::optional<pinned_pool::buffer> payload = outgoing_pool_.take(head + bytes);
    if (!payload) return false;
    const bool last = at + bytes == size;
    const protocol::typed_piece_job job{waiting.source, typed.source_layout, at, size};
    std::memcpy(payload->data(), &job, head);
    std::optional<std::uint32_t> pack;
    if (bytes > 0) pack = agent_.pack_piece(payload->data(), bytes);
    remote_operation piece = op;
    piece.kind = static_cast<std::int32_t>(last && protocol::notifies(op)
                                               ? protocol::operation_kind::typed_put_notify
                                               : protocol::operation_kind::typed_put);
    piece.size = static_cast<std::int64_t>(head + bytes);
    const protocol::typed_piece_header header{typed.target_type.id, typed.target_type.generation,
                                              at, size, 0};
    to_post_.push_back(outgoing_step{piece,
                                     std::move(*payload),
                                     {},
                                     pack,
                                     device_rank,
                                     last ? op.operation_id : 0u,
                                     true,
                                     header});
    waiting.next += bytes;
    ++typed.pieces;
  }
  return true;
}

bool network_proxy::admit_waiting() {
  bool any = false;
  while (!waiting_.empty()) {
    waiting_operation& waiting = waiting_.front();
    const remote_operation& op = waiting.op;
    const int device_rank = op.source_rank - shape_.rank_start;
    const auto size = static_cast<std::size_t>(op.size);
    if (waiting.typed) {
      if (!admit_typed(waiting, device_rank)) return any;
    } else if (!protocol::carries_payload(op)) {
      to_post_.push_back(outgoing_step{op, {}, {}, std::nullopt, device_rank, 0, true, {}});
    } else if (size <= transport::mpi_engine::header_payload_bytes) {
      // The engine copies it into the header message when it posts: no staging.
      to_post_.push_back(outgoing_step{
          op, {}, std::move(waiting.inline_payload), std::nullopt, device_rank, 0, true, {}});
    } else if (op.size <= protocol::inline_put_limit) {
      std::optional<pinned_pool::buffer> payload = outgoing_pool_.take(size);
      if (!payload) return any;
      std::memcpy(payload->data(), waiting.inline_payload.data(), size);
      to_post_.push_back(
          outgoing_step{op, std::move(*payload), {}, std::nullopt, device_rank, 0, true, {}});
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
                                         true,
                                         {}});
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
    if (step.piece_header) {  // the agent has packed: its job's words are no longer read
      std::memcpy(step.payload.data(), &*step.piece_header, sizeof *step.piece_header);
    }
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
  if (device_rank < 0 || device_rank >= shape_.device_ranks) return nullptr;
  if (checks::for_host_window(op)) {
    if (!checks::check_host_window_put(op, ranks_.process_of(op.source_rank), host_windows_.own)
             .empty()) {
      return nullptr;
    }
    return take_landing(op);
  }
  if (op.window < 0 || op.window >= protocol::max_windows) return nullptr;
  // A typed piece's range in the window is checked once its header is here (landed); a layout
  // part is for no window.
  const protocol::window_entry& window = collectives_.own_window(op.window, device_rank);
  if (!protocol::layout_part(op) &&
      (window.generation == 0 ||
       (!protocol::typed_piece(op) &&
        !protocol::range_inside_window(op.offset, op.size, window.size)))) {
    return nullptr;
  }
  return take_landing(op);
}

const protocol::host_window_entry& network_proxy::own_host_window(
    const remote_operation& op) const {
  return host_windows_.own[static_cast<std::size_t>(op.window - protocol::host_window_first_slot)];
}

std::string network_proxy::refusal(const remote_operation& op) const {
  if (checks::for_host_window(op)) {
    return checks::check_host_window_put(op, ranks_.process_of(op.source_rank), host_windows_.own);
  }
  return transport::delivery::refusal(op);
}

void* network_proxy::take_landing(const remote_operation& op) {
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
  const bool host_window = checks::for_host_window(op);
  if (host_window && !protocol::carries_payload(op)) {
    // landing_address checked those with a payload.
    const std::string problem =
        checks::check_host_window_put(op, ranks_.process_of(op.source_rank), host_windows_.own);
    if (!problem.empty()) throw error(DCUDA_ERROR_PEER, "host proxy: " + problem);
  }
  protocol::job_count counter{};
  if (protocol::notifies(op)) {
    // A put into a host window counts where that window's stream waits and the rank's own waits
    // look: the rank's host-initiated counters, released at system scope as their other writers do.
    counter.counter = (host_window ? host_windows_.counters : buffers_.device_notifications()) +
                      protocol::counter_index(static_cast<std::uint32_t>(device_rank),
                                              static_cast<std::uint32_t>(op.tag));
    counter.system_scope = host_window;
  }
  if (!protocol::carries_payload(op)) {
    if (counter.counter != nullptr) agent_.count(counter);
    trace_.record(network_trace::hop::to_agent, op);
    return;
  }
  if (protocol::layout_part(op)) {
    land_layout_part(op, landing);
    return;
  }
  if (protocol::typed_piece(op)) {
    land_typed_piece(op, landing, counter);
    trace_.record(network_trace::hop::to_agent, op);
    return;
  }
  // One job: the data, then the count. A small payload travels in the job, so its slot is free
  // again at once; a larger one's staging goes back once the agent has copied it.
  const std::uint64_t base =
      host_window ? own_host_window(op).base : collectives_.own_window(op.window, device_rank).base;
  auto* destination = reinterpret_cast<char*>(base) + op.offset;
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

// A part of a layout another process sends ahead of its typed pieces: kept until the layout is
// complete, then decoded and built (received_layouts.h). Its staging goes back at once.
void network_proxy::land_layout_part(const remote_operation& op, void* landing) {
  const auto found = landings_.find(landing);
  const pinned_pool::buffer staged = std::move(found->second);
  landings_.erase(found);
  protocol::layout_part_header head{};
  std::memcpy(&head, staged.data(), sizeof head);
  const std::string problem = layouts_received_.take_part(
      ranks_.process_of(op.source_rank), head,
      std::span<const char>(staged.data() + sizeof head,
                            static_cast<std::size_t>(op.size) - sizeof head));
  if (!problem.empty()) throw error(DCUDA_ERROR_PEER, "host proxy: " + problem);
}

// A typed piece: its header (from another process) checked against the layout that process sent
// and the target window, then the agent's unpack job written over it.
void network_proxy::land_typed_piece(const remote_operation& op, void* landing,
                                     protocol::job_count counter) {
  const int process = ranks_.process_of(op.source_rank);
  protocol::typed_piece_header head{};
  std::memcpy(&head, landing, sizeof head);
  const auto bytes = static_cast<std::uint64_t>(op.size) - sizeof head;
  const auto refuse = [&](const std::string& why) {
    throw error(DCUDA_ERROR_PEER,
                "host proxy: process " + std::to_string(process) + " sent a typed piece (rank " +
                    std::to_string(op.source_rank) + " to rank " + std::to_string(op.target_rank) +
                    ", window " + std::to_string(op.window) + ", offset " +
                    std::to_string(op.offset) + ", its type {id " + std::to_string(head.type_id) +
                    ", generation " + std::to_string(head.type_generation) + "}, packed bytes " +
                    std::to_string(head.stream_at) + " + " + std::to_string(bytes) + " of " +
                    std::to_string(head.total) + "): " + why);
  };
  const protocol::type_layout* layout =
      layouts_received_.find(process, head.type_id, head.type_generation);
  if (layout == nullptr) refuse("its layout never came");
  if (head.stream_at > head.total || bytes > head.total - head.stream_at) {
    refuse("the piece reaches past the put's end");
  }
  if (layout->size == 0 ? head.total != 0 : head.total % layout->size != 0) {
    refuse("the put is no whole number of the type's " + std::to_string(layout->size) +
           "-byte elements");
  }
  const std::uint64_t count = layout->size == 0 ? 0 : head.total / layout->size;
  std::int64_t low = 0, high = 0;
  if (!protocol::typed_span_fits(*layout, count) ||
      !protocol::typed_range(*layout, count, low, high)) {
    refuse(std::to_string(count) + " elements span more bytes than a typed put can address");
  }
  if (protocol::covers_a_byte_twice(*layout, count)) {
    refuse(std::to_string(count) + " elements cover some byte twice");
  }
  const int device_rank = op.target_rank - shape_.rank_start;
  const protocol::window_entry& window = collectives_.own_window(op.window, device_rank);
  const auto window_bytes = static_cast<std::int64_t>(window.size);
  if (high > low && (op.offset + low < 0 || op.offset + high > window_bytes)) {
    refuse("it touches bytes [" + std::to_string(op.offset + low) + ", " +
           std::to_string(op.offset + high) + ") of a window of " + std::to_string(window_bytes) +
           " bytes");
  }
  const protocol::typed_piece_job job{window.base + static_cast<std::uint64_t>(op.offset),
                                      reinterpret_cast<std::uint64_t>(layout), head.stream_at,
                                      head.total};
  std::memcpy(landing, &job, sizeof job);
  const auto found = landings_.find(landing);
  const std::uint32_t unpack =
      bytes > 0 ? agent_.unpack_piece(landing, bytes, counter) : agent_.count(counter);
  delivering_.push_back(delivery_step{unpack, std::move(found->second)});
  landings_.erase(found);
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
