#include "runtime/network_proxy.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "dcuda/detail/protocol/calls.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/notification_counters.h"
#include "runtime/error.h"
#include "runtime/error_text.h"

namespace dcuda::runtime {
namespace {

using protocol::remote_operation;

// Pieces of a staged payload: one engine chunk each.
constexpr std::size_t piece_bytes = transport::mpi_engine::default_chunk_bytes;
constexpr std::size_t operation_bytes = sizeof(remote_operation) + sizeof(std::uint64_t);
static_assert(operation_bytes <= protocol::entry_payload_bytes,
              "a remote operation and its source address fill the first entry");

// What each process contributes to a dcuda_win_create over DCUDA_COMM_WORLD.
struct window_header {
  std::uint32_t windows_in_use;
  std::int32_t ranks;
  std::uint32_t generation[protocol::max_windows];
};
struct window_card {
  std::uint64_t base;  // as the owner sees it
  std::uint64_t size;
  std::uint64_t offset;  // of base in the exported allocation
  std::int32_t exported;
  std::int32_t pad;
  cudaIpcMemHandle_t allocation;
};

}  // namespace

network_proxy::network_proxy(const process_group& group, device_state& state, pinned_pool& outgoing,
                             pinned_pool& incoming, const std::string& trace_prefix)
    : group_(group),
      state_(state),
      shape_(state.shape()),
      outgoing_pool_(outgoing),
      incoming_pool_(incoming),
      agent_(state.uses_network() ? state.delivery_queue() : nullptr),
      small_landings_(protocol::delivery_queue_slots),
      windows_(static_cast<std::size_t>(shape_.device_ranks) * protocol::max_windows),
      trace_(trace_prefix, shape_.process_index),
      engine_(group.world(), group.ranks(), *this) {
  static_assert(protocol::delivery_inline_bytes <= sizeof(std::uint64_t));
  free_small_landings_.reserve(small_landings_.size());
  for (std::uint32_t slot = 0; slot < small_landings_.size(); ++slot) {
    free_small_landings_.push_back(slot);
  }
  for (int p = 0; p < shape_.process_count; ++p) {
    any_peer_ = any_peer_ || group.route_to_process(p) == protocol::route::peer;
  }
}

network_proxy::~network_proxy() {
  // The kernel has ended (and with it the agent's copies); a window row upload may still be on
  // its way.
  cudaStreamSynchronize(uploads_.get());
}

const protocol::window_entry& network_proxy::own_window(int slot, int device_rank) const {
  return windows_[protocol::window_index(slot, static_cast<std::uint32_t>(device_rank),
                                         static_cast<std::uint32_t>(shape_.device_ranks))];
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
        const std::size_t bytes = std::min(piece_bytes, size - at);
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
      protocol::system_atomic<std::uint32_t>(state_.host_acks()[step.device_rank])
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
  return static_cast<std::uint32_t>(op.size) <= protocol::delivery_inline_bytes;
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
    if (collective_ && op.window >= 0 && op.window < protocol::max_windows &&
        collective_->request.call == static_cast<std::uint32_t>(protocol::call::win_create) &&
        own_window(op.window, op.target_rank - shape_.rank_start).generation == 0) {
      return false;
    }
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
  const protocol::window_entry& window = own_window(op.window, device_rank);
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
    counter = state_.device_notifications() +
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
  const protocol::window_entry& window = own_window(op.window, device_rank);
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

// ---- collectives ----

void network_proxy::take_collective(const channel_message& message) {
  if (collective_) {
    throw error("host proxy: collective " + std::to_string(message.aux) +
                " started before collective " + std::to_string(collective_->sequence) + " ended");
  }
  collective& next = collective_.emplace();
  next.sequence = static_cast<std::uint32_t>(message.aux);
  std::memcpy(&next.request, message.text.data(),
              std::min(sizeof next.request, message.text.size()));
}

std::vector<char> network_proxy::window_contribution() const {
  window_header header{};
  header.windows_in_use = collective_->request.windows_in_use;
  header.ranks = shape_.device_ranks;
  std::memcpy(header.generation, collective_->request.generation, sizeof header.generation);
  std::vector<char> bytes(sizeof header + sizeof(window_card) * shape_.device_ranks);
  std::memcpy(bytes.data(), &header, sizeof header);
  const protocol::window_offer* offers = state_.window_offers();
  for (int r = 0; r < shape_.device_ranks; ++r) {
    window_card card{};
    const volatile protocol::window_offer& offer = offers[r];
    card.base = offer.base;
    card.size = offer.size;
    if (any_peer_ && card.base != 0 && card.size != 0) {
      try {
        const exported_memory exported = export_memory(reinterpret_cast<void*>(card.base));
        card.allocation = exported.handle;
        card.offset = exported.offset;
        card.exported = 1;
      } catch (const error& e) {
        std::ostringstream text;
        text << "dcuda_win_create: rank " << shape_.rank_start + r << ": the window at 0x"
             << std::hex << card.base << std::dec << " (" << card.size
             << " bytes) cannot be shared with the GPUs of other processes (" << e.what()
             << "); allocate windows with cudaMalloc, or set DCUDA_FORCE_NETWORK=1";
        throw error(text.str());
      }
    }
    std::memcpy(bytes.data() + sizeof header + sizeof card * r, &card, sizeof card);
  }
  return bytes;
}

void network_proxy::complete_window_creation(
    const std::vector<transport::mpi_engine::contribution>& all,
    protocol::world_collective_result& result) {
  std::uint32_t in_use = 0;
  for (const auto& c : all) {
    window_header header{};
    std::memcpy(&header, c.bytes.data(), sizeof header);
    in_use |= header.windows_in_use;
  }
  result.slot = protocol::lowest_free_slot(in_use);
  if (result.slot < 0) return;
  const int slot = result.slot;
  std::uint32_t newest = 0;
  for (const auto& c : all) {
    window_header header{};
    std::memcpy(&header, c.bytes.data(), sizeof header);
    newest = std::max(newest, header.generation[slot]);
  }
  result.generation = protocol::next_generation(newest);

  const bootstrap::rank_layout& ranks = group_.ranks();
  std::vector<protocol::window_entry> row(static_cast<std::size_t>(shape_.world_size));
  for (std::size_t p = 0; p < all.size(); ++p) {
    const protocol::route path = group_.route_to_process(static_cast<int>(p));
    for (int r = 0; r < ranks.ranks_of(static_cast<int>(p)); ++r) {
      window_card card{};
      std::memcpy(&card, all[p].bytes.data() + sizeof(window_header) + sizeof card * r,
                  sizeof card);
      protocol::window_entry& entry =
          row[static_cast<std::size_t>(ranks.rank_start(static_cast<int>(p)) + r)];
      entry.size = card.size;
      entry.generation = result.generation;
      entry.comm = 0;  // DCUDA_COMM_WORLD
      if (path == protocol::route::local) {
        entry.base = card.base;
        windows_[protocol::window_index(slot, static_cast<std::uint32_t>(r),
                                        static_cast<std::uint32_t>(shape_.device_ranks))] = entry;
      } else if (path == protocol::route::peer && card.exported != 0) {
        // Shared before the run (dcuda_host_share_memory), or mapped now, while the kernel runs.
        char* mapped = group_.shared_mapping(static_cast<int>(p), card.base - card.offset);
        if (mapped == nullptr) mapped = mapped_windows_.open(static_cast<int>(p), card.allocation);
        entry.base = reinterpret_cast<std::uint64_t>(mapped) + card.offset;
      }
    }
  }
  protocol::window_entry* device_row =
      state_.windows() +
      static_cast<std::size_t>(slot) * static_cast<std::size_t>(shape_.world_size);
  DCUDA_CUDA_CHECK(cudaMemcpyAsync(device_row, row.data(), row.size() * sizeof(row[0]),
                                   cudaMemcpyHostToDevice, uploads_.get()));
  DCUDA_CUDA_CHECK(cudaStreamSynchronize(uploads_.get()));
}

void network_proxy::publish_result(const protocol::world_collective_result& result,
                                   std::uint32_t sequence) {
  protocol::world_collective_result* shared = state_.collective_result();
  volatile protocol::world_collective_result& fields = *shared;
  fields.slot = result.slot;
  fields.generation = result.generation;
  protocol::system_atomic<std::uint32_t>(shared->completed)
      .store(sequence, cuda::memory_order_release);
}

bool network_proxy::advance_collective() {
  if (!collective_) return false;
  collective& current = *collective_;
  const auto call = static_cast<protocol::call>(current.request.call);
  if (!current.begun) {
    // Everything the ranks issued before the collective goes out first: the others count it.
    if (!waiting_.empty() || !to_post_.empty()) return false;
    engine_.begin_collective(
        static_cast<std::int32_t>(current.request.call),
        call == protocol::call::win_create ? window_contribution() : std::vector<char>{});
    current.begun = true;
  }
  if (!current.contributions) {
    current.contributions = engine_.finish_collective();
    if (!current.contributions) {
      std::ostringstream text;
      text << "  process " << shape_.process_index << " waits in " << protocol::call_name(call)
           << " (collective " << current.sequence << " of DCUDA_COMM_WORLD) for";
      const std::vector<int> missing = engine_.missing_processes();
      if (missing.empty()) {
        text << " operations still on their way to it\n";
      } else {
        text << " process" << (missing.size() > 1 ? "es" : "");
        for (const int p : missing) text << " " << p;
        text << ", which " << (missing.size() > 1 ? "have" : "has") << " not joined it\n";
      }
      set_status(text.str());
      return false;
    }
  }
  // What arrived before the collective is in the windows before anyone leaves it.
  if (!agent_.all_finished()) return false;

  const auto& all = *current.contributions;
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].call != static_cast<std::int32_t>(current.request.call)) {
      throw error(describe_collective_mismatch(shape_.process_index, all[shape_.process_index].call,
                                               static_cast<std::int64_t>(p), all[p].call));
    }
  }
  protocol::world_collective_result result{};
  result.slot = -1;
  if (call == protocol::call::win_create) complete_window_creation(all, result);
  if (call == protocol::call::win_free && current.request.slot >= 0 &&
      current.request.slot < protocol::max_windows) {
    for (int r = 0; r < shape_.device_ranks; ++r) {
      windows_[protocol::window_index(current.request.slot, static_cast<std::uint32_t>(r),
                                      static_cast<std::uint32_t>(shape_.device_ranks))] = {};
    }
  }
  const std::uint32_t sequence = current.sequence;
  collective_.reset();
  set_status({});
  publish_result(result, sequence);
  return true;
}

void network_proxy::set_status(std::string status) {
  std::lock_guard lock(status_mutex_);
  status_ = std::move(status);
}

std::string network_proxy::waiting_for() const {
  std::lock_guard lock(status_mutex_);
  return status_;
}

bool network_proxy::progress() {
  bool any = admit_waiting();
  any = post_ready() || any;
  any = engine_.progress() || any;
  any = finish_deliveries() || any;
  any = advance_collective() || any;
  return any;
}

}  // namespace dcuda::runtime
