#include "runtime/watchdog.h"

#include <atomic>
#include <sstream>

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
                   double timeout_s, std::function<std::string()> other_processes)
    : records_(records),
      device_ranks_(device_ranks),
      rank_start_(rank_start),
      timeout_s_(timeout_s),
      other_processes_(std::move(other_processes)),
      seen_(static_cast<std::size_t>(device_ranks)) {}

protocol::wait_record watchdog::read(int rank) const {
  // The device rewrites a record field by field, then stores `version` with release; read until
  // the version is the same before and after the fields.
  const protocol::wait_record& shared = records_[rank];
  protocol::wait_record copy{};
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::uint32_t before =
        protocol::system_atomic<std::uint32_t>(const_cast<std::uint32_t&>(shared.version))
            .load(cuda::memory_order_acquire);
    const volatile protocol::wait_record& fields = shared;
    copy.kind = fields.kind;
    copy.call_id = fields.call_id;
    copy.detail = fields.detail;
    copy.needed = fields.needed;
    copy.available = fields.available;
    copy.started = fields.started;
    std::atomic_thread_fence(std::memory_order_acquire);
    copy.version = fields.version;
    if (copy.version == before) break;
  }
  return copy;
}

watchdog::verdict watchdog::check(clock::time_point now) {
  if (timeout_s_ <= 0) return {};
  bool some_rank_stuck = false;
  bool every_rank_stuck_or_finished = true;
  for (int rank = 0; rank < device_ranks_; ++rank) {
    const protocol::wait_record record = read(rank);
    seen& last = seen_[static_cast<std::size_t>(rank)];
    if (!same_wait(record, last.record)) {
      last.record = record;
      last.since = now;
    }
    const bool finished =
        static_cast<protocol::wait_kind>(record.kind) == protocol::wait_kind::finished;
    const bool stuck =
        is_waiting(record) && std::chrono::duration<double>(now - last.since).count() >= timeout_s_;
    some_rank_stuck = some_rank_stuck || stuck;
    every_rank_stuck_or_finished = every_rank_stuck_or_finished && (stuck || finished);
  }
  if (!some_rank_stuck) {
    last_warning_.clear();
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
  if (ranks == last_warning_) return {};
  last_warning_ = ranks;
  report << "dcuda_host_run: some ranks have waited " << timeout_s_
         << " s (DCUDA_WAIT_TIMEOUT) without progress while other ranks are still running; the run "
            "goes on. "
            "The ranks of this GPU are:\n"
         << ranks;
  return {verdict::warning, report.str()};
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
