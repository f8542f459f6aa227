#include "runtime/stream_network_messages.h"

#include <sstream>

namespace dcuda::runtime {
namespace {

// How far ahead of the barriers met here another process's barrier may be: its streams run ahead
// by at most the barriers its host queued, and no program queues a million before one completes.
constexpr std::uint64_t barriers_ahead_limit = std::uint64_t{1} << 20;

std::string kind_name(std::uint32_t kind) {
  switch (static_cast<stream_message_kind>(kind)) {
    case stream_message_kind::put:
      return "put";
    case stream_message_kind::notify:
      return "notify";
    case stream_message_kind::acknowledgement:
      return "acknowledgement";
    case stream_message_kind::barrier_arrival:
      return "barrier arrival";
    case stream_message_kind::closing:
      return "closing";
  }
  return "kind " + std::to_string(kind);
}

std::optional<std::string> check_target(const stream_message& message,
                                        const stream_message_context& context) {
  std::ostringstream text;
  const auto kind = static_cast<stream_message_kind>(message.kind);
  if (message.rank < context.rank_start ||
      message.rank - context.rank_start >= context.rank_count) {
    text << "target rank " << message.rank << " is not one of this process's ranks ("
         << context.rank_start << ".." << context.rank_start + context.rank_count - 1 << ")";
    return text.str();
  }
  const bool needs_tag = kind == stream_message_kind::notify;
  if ((needs_tag || message.tag != -1) && (message.tag < 0 || message.tag >= context.tag_count)) {
    text << "tag " << message.tag << " is outside 0.." << context.tag_count - 1;
    return text.str();
  }
  const std::optional<std::uint64_t> window_size =
      context.window_size ? context.window_size(message.window) : std::nullopt;
  if (!window_size) {
    text << "window " << message.window << " is not a live host window here";
    return text.str();
  }
  if (kind == stream_message_kind::put &&
      (message.offset > *window_size || message.size > *window_size - message.offset)) {
    text << "bytes [" << message.offset << ", " << message.offset << " + " << message.size
         << ") are outside window " << message.window << ", of which this process exposes "
         << *window_size << " bytes";
    return text.str();
  }
  return std::nullopt;
}

}  // namespace

std::string stream_message_text(const stream_message& message) {
  const std::string kind = kind_name(message.kind);
  switch (static_cast<stream_message_kind>(message.kind)) {
    case stream_message_kind::put:
      return kind + " of " + std::to_string(message.size) + " bytes to rank " +
             std::to_string(message.rank) + " (window " + std::to_string(message.window) +
             ", offset " + std::to_string(message.offset) + ", tag " + std::to_string(message.tag) +
             ")";
    case stream_message_kind::notify:
      return kind + " of tag " + std::to_string(message.tag) + " to rank " +
             std::to_string(message.rank);
    case stream_message_kind::barrier_arrival:
      return kind + " " + std::to_string(message.sequence);
    default:
      return kind;
  }
}

std::optional<std::string> check_stream_message(const stream_message& message,
                                                const stream_message_context& context) {
  std::optional<std::string> wrong;
  switch (static_cast<stream_message_kind>(message.kind)) {
    case stream_message_kind::put:
    case stream_message_kind::notify:
      wrong = check_target(message, context);
      break;
    case stream_message_kind::acknowledgement:
      if (context.unacknowledged_puts == 0) {
        wrong = "an acknowledgement, but every put this process sent there is acknowledged";
      }
      break;
    case stream_message_kind::barrier_arrival:
      if (message.sequence == 0 || message.sequence > context.barriers_met + barriers_ahead_limit) {
        wrong = "barrier number " + std::to_string(message.sequence) + " (" +
                std::to_string(context.barriers_met) + " met here)";
      }
      break;
    case stream_message_kind::closing:
      break;
    default:
      wrong = "unknown " + kind_name(message.kind);
  }
  if (!wrong) return std::nullopt;
  return "a stream-ordered " + kind_name(message.kind) + " from process " +
         std::to_string(context.sender) + " is not one dcuda sends: " + *wrong;
}

stream_put_ledger::stream_put_ledger(int processes)
    : sent_(static_cast<std::size_t>(processes), 0), acknowledged_(sent_) {}

void stream_put_ledger::sent(int process) {
  ++sent_[static_cast<std::size_t>(process)];
}

void stream_put_ledger::acknowledged(int process) {
  ++acknowledged_[static_cast<std::size_t>(process)];
}

std::uint64_t stream_put_ledger::unacknowledged(int process) const {
  const auto p = static_cast<std::size_t>(process);
  return sent_[p] - acknowledged_[p];
}

std::vector<std::uint64_t> stream_put_ledger::sent_so_far() const {
  return sent_;
}

bool stream_put_ledger::covers(const std::vector<std::uint64_t>& needed) const {
  for (std::size_t p = 0; p < needed.size() && p < acknowledged_.size(); ++p) {
    if (acknowledged_[p] < needed[p]) return false;
  }
  return true;
}

bool stream_put_ledger::all_acknowledged() const {
  return covers(sent_);
}

stream_barrier_tally::stream_barrier_tally(int processes, int self)
    : processes_(processes), self_(self) {}

bool stream_barrier_tally::arrive(int process, std::uint64_t number) {
  std::vector<bool>& arrived = arrived_[number];
  if (arrived.empty()) arrived.assign(static_cast<std::size_t>(processes_), false);
  if (arrived[static_cast<std::size_t>(process)]) return false;
  arrived[static_cast<std::size_t>(process)] = true;
  return true;
}

bool stream_barrier_tally::take_complete(std::uint64_t number) {
  if (!missing(number).empty()) return false;
  arrived_.erase(number);
  ++met_;
  return true;
}

std::vector<int> stream_barrier_tally::missing(std::uint64_t number) const {
  const auto found = arrived_.find(number);
  std::vector<int> absent;
  for (int p = 0; p < processes_; ++p) {
    if (p == self_) continue;
    if (found == arrived_.end() || !found->second[static_cast<std::size_t>(p)]) absent.push_back(p);
  }
  return absent;
}

}  // namespace dcuda::runtime
