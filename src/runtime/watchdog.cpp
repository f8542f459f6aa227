#include "runtime/watchdog.h"

#include <atomic>
#include <type_traits>
#include <sstream>

#include "dcuda/detail/protocol/calls.h"
#include "runtime/error_text.h"

namespace dcuda::runtime {
namespace {

bool same_wait(const protocol::wait_record& a, const protocol::wait_record& b) {
  return a.kind == b.kind && a.call_id == b.call_id && a.detail == b.detail &&
         a.needed == b.needed && a.available == b.available && a.started == b.started;
}

bool is_waiting(const protocol::wait_record& r) {
  const auto kind = static_cast<protocol::wait_kind>(r.kind);
  return kind != protocol::wait_kind::none && kind != protocol::wait_kind::finished;
}

}  // namespace

watchdog::watchdog(const protocol::wait_record* records, int device_ranks, int rank_start,
                   double timeout_s, std::function<std::string()> other_processes,
                   bool kernel_waits_for_finish)
    : records_(records),
      device_ranks_(device_ranks),
      rank_start_(rank_start),
      timeout_s_(timeout_s),
      other_processes_(std::move(other_processes)),
      kernel_waits_for_finish_(kernel_waits_for_finish),
      seen_(static_cast<std::size_t>(device_ranks)) {}

protocol::wait_record watchdog::read(int rank) const {
  // The device rewrites a record field by field, then stores `version` with release; read until
  // the version is the same before and after the fields. Every field is read as an atomic
  // (relaxed: the fence below orders them before the second read of the version), so that a
  // read that overlaps a rewrite is a detected retry, not a data race.
  auto& shared = const_cast<protocol::wait_record&>(records_[rank]);
  const auto relaxed = [](auto& field) {
    using field_type = std::remove_reference_t<decltype(field)>;
    return protocol::system_atomic<field_type>(field).load(cuda::memory_order_relaxed);
  };
  protocol::wait_record copy{};
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::uint32_t before =
        protocol::system_atomic<std::uint32_t>(shared.version).load(cuda::memory_order_acquire);
    copy.kind = relaxed(shared.kind);
    copy.call_id = relaxed(shared.call_id);
    copy.detail = relaxed(shared.detail);
    copy.needed = relaxed(shared.needed);
    copy.available = relaxed(shared.available);
    copy.started = relaxed(shared.started);
    std::atomic_thread_fence(std::memory_order_acquire);
    copy.version = relaxed(shared.version);
    if (copy.version == before) break;
  }
  return copy;
}

watchdog::verdict watchdog::check(clock::time_point now) {
  if (timeout_s_ <= 0) return {};
  const auto lasted = [&](clock::time_point since) {
    return std::chrono::duration<double>(now - since).count() >= timeout_s_;
  };
  const bool first_check = !quiet_since_.has_value();
  bool some_rank_stuck = false;
  bool every_rank_stuck_or_finished = true;
  bool some_rank_seen = false;          // in a published wait, or finished, since the last check
  bool some_rank_in_finish = false;     // finished, or waiting in dcuda_gpu_finish
  bool some_rank_long_outside = false;  // outside any published wait for the timeout
  for (int rank = 0; rank < device_ranks_; ++rank) {
    const protocol::wait_record record = read(rank);
    seen& last = seen_[static_cast<std::size_t>(rank)];
    if (!same_wait(record, last.record)) {
      last.record = record;
      last.since = now;
    }
    const auto kind = static_cast<protocol::wait_kind>(record.kind);
    // A changed version means the rank published a wait (or ended one) since the last check,
    // even if its record shows none again by now.
    if (first_check || kind != protocol::wait_kind::none || record.version != last.version) {
      last.outside_since = now;
      some_rank_seen = some_rank_seen || !first_check;
    }
    last.version = record.version;
    const bool finished = kind == protocol::wait_kind::finished;
    const bool stuck = is_waiting(record) && lasted(last.since);
    some_rank_stuck = some_rank_stuck || stuck;
    every_rank_stuck_or_finished = every_rank_stuck_or_finished && (stuck || finished);
    some_rank_in_finish = some_rank_in_finish || finished ||
                          (is_waiting(record) && static_cast<protocol::call>(record.call_id) ==
                                                     protocol::call::gpu_finish);
    some_rank_long_outside =
        some_rank_long_outside || (kind == protocol::wait_kind::none && lasted(last.outside_since));
  }
  if (first_check || some_rank_seen) quiet_since_ = now;
  if (!some_rank_stuck) {
    last_warning_.clear();
    if (kernel_waits_for_finish_ && !quiet_warned_ && lasted(*quiet_since_)) {
      quiet_warned_ = true;
      return {verdict::warning, quiet_warning()};
    }
    return {};
  }
  std::string ranks = describe_ranks();
  if (other_processes_) ranks += other_processes_();
  std::ostringstream report;
  if (every_rank_stuck_or_finished) {
    report << "dcuda_host_run: no progress for " << timeout_s_
           << " s (DCUDA_WAIT_TIMEOUT): every rank waits or has finished; the ranks of this GPU "
              "are:\n"
           << ranks;
    return {verdict::standstill, report.str()};
  }
  if (some_rank_in_finish && some_rank_long_outside) {
    ranks +=
        "Ranks shown as not in a dcuda wait may have returned from the kernel without calling "
        "dcuda_gpu_finish; the ranks in dcuda_gpu_finish then wait for them forever. Call "
        "dcuda_gpu_finish in every rank before returning.\n";
  }
  if (ranks == last_warning_) return {};
  last_warning_ = ranks;
  report << "dcuda_host_run: some ranks have waited " << timeout_s_
         << " s (DCUDA_WAIT_TIMEOUT) without progress while other ranks are still running; the run "
            "goes on. "
            "The ranks of this GPU are:\n"
         << ranks;
  return {verdict::warning, report.str()};
}

std::string watchdog::quiet_warning() const {
  const bool one = device_ranks_ == 1;
  std::ostringstream text;
  text << "dcuda_host_run: this GPU's kernel is still running, but for " << timeout_s_
       << " s (DCUDA_WAIT_TIMEOUT) ";
  if (one) {
    text << "its only rank (world rank " << rank_start_
         << ") has not been seen in a dcuda wait and has not finished. If it returned";
  } else {
    text << "none of its " << device_ranks_ << " ranks (world ranks " << rank_start_ << "-"
         << rank_start_ + device_ranks_ - 1
         << ") has been seen in a dcuda wait, and none has finished. If the ranks returned";
  }
  text << " from the kernel without calling dcuda_gpu_finish, the kernel cannot end: the delivery "
          "agent block (used when some rank is reached through the network) waits for every "
          "rank's dcuda_gpu_finish. Call dcuda_gpu_finish before returning from the kernel. "
          "Ranks that work for a long time without waiting in dcuda look the same; the run goes "
          "on.\n";
  return text.str();
}

std::string watchdog::describe_ranks() const {
  std::ostringstream text;
  int group_start = 0;
  std::string group_text;
  const auto close_group = [&](int end) {
    if (end <= group_start) return;
    text << "  rank" << (end - group_start > 1 ? "s " : " ") << rank_start_ + group_start;
    if (end - group_start > 1) text << "-" << rank_start_ + end - 1;
    text << ": " << group_text << "\n";
  };
  for (int rank = 0; rank < device_ranks_; ++rank) {
    const std::string line = describe_wait(read(rank), device_ranks_);
    if (rank == 0 || line != group_text) {
      close_group(rank);
      group_start = rank;
      group_text = line;
    }
  }
  close_group(device_ranks_);
  return text.str();
}

}  // namespace dcuda::runtime
