// A soak of the network engine between processes: bounded random traffic for a given time, every
// operation kind (put, put_notify, notify, and collectives between them), sizes 1 B to 1 MiB
// (log-uniform), random source and target ranks, a receiver that now and then holds operations
// back (a busy delivery agent). Every byte is checked against a pattern derived from (source
// rank, sequence, offset); every operation of a (source, target) pair must arrive exactly once
// and in order (consecutive sequence numbers); notifications are counted per source, target and
// tag and compared with what the senders sent. The first bad message fails the run by name.
//
//   engine_soak [SECONDS] [SEED]      (SECONDS default 3; DCUDA_SOAK_SECONDS overrides it)
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/mpi_session.h"
#include "bootstrap/process_layout.h"
#include "transport/mpi_engine.h"

using namespace dcuda;
using transport::operation_kind;
using transport::remote_operation;

namespace {

constexpr std::size_t max_size = std::size_t{1} << 20;
constexpr int tags = 256;
constexpr std::size_t max_in_flight_bytes = std::size_t{32} << 20;  // posted, not yet sent
constexpr std::size_t max_in_flight_operations = 256;
constexpr std::uint64_t operations_per_collective = 400;

unsigned char pattern(int source, std::uint32_t sequence, std::size_t offset) {
  std::uint64_t x = (static_cast<std::uint64_t>(source) << 40) ^
                    (static_cast<std::uint64_t>(sequence) << 20) ^ (offset / 8);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 29;
  return static_cast<unsigned char>(x >> (8 * (offset % 8)));
}

// Names the first bad message and ends the job at once, before anything is torn down (a sender's
// payloads must outlive its pending sends).
[[noreturn]] void fail(const std::string& what) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::printf("engine_soak: FAIL on process %d: %s\n", me, what.c_str());
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return
}

std::string describe(const remote_operation& op) {
  static const char* const kinds[] = {"?", "put", "put_notify", "notify"};
  const char* kind = op.kind >= 1 && op.kind <= 3 ? kinds[op.kind] : kinds[0];
  return std::string(kind) + " " + std::to_string(op.operation_id) + " of rank " +
         std::to_string(op.source_rank) + " to rank " + std::to_string(op.target_rank) + " (size " +
         std::to_string(op.size) + ", tag " + std::to_string(op.tag) + ")";
}

// The receiving side: a buffer of its own per operation, checked when the engine says it landed.
class checking_sink : public transport::delivery {
 public:
  checking_sink(const bootstrap::rank_layout& layout, int me, std::uint64_t seed)
      : layout_(layout),
        start_(layout.rank_start(me)),
        count_(layout.ranks_of(me)),
        random_(seed),
        next_sequence_(static_cast<std::size_t>(layout.world_size() * count_), 1),
        notifications_(static_cast<std::size_t>(layout.world_size() * count_ * tags), 0) {}

  bool ready_for(const remote_operation&) override { return random_() % 8 != 0; }

  void* landing_address(const remote_operation& op) override {
    check_names_a_rank_here(op);
    auto& buffer = landing_[key(op)];
    buffer = std::make_unique<unsigned char[]>(static_cast<std::size_t>(op.size));
    std::memset(buffer.get(), 0, static_cast<std::size_t>(op.size));
    return buffer.get();
  }

  void landed(const remote_operation& op, void* landing) override {
    check_names_a_rank_here(op);
    std::uint32_t& expected = next_sequence_[pair(op.source_rank, op.target_rank)];
    if (op.operation_id != expected) {
      fail(describe(op) + ": expected sequence " + std::to_string(expected) +
           " of this source and target (lost or reordered)");
    }
    ++expected;
    if (transport::carries_payload(op)) {
      const auto found = landing_.find(key(op));
      if (found == landing_.end() || found->second.get() != landing) {
        fail(describe(op) + ": landed elsewhere than where it was placed");
      }
      const unsigned char* bytes = found->second.get();
      for (std::size_t i = 0; i < static_cast<std::size_t>(op.size); ++i) {
        if (bytes[i] != pattern(op.source_rank, op.operation_id, i)) {
          char text[96];
          std::snprintf(text, sizeof text, ": byte %zu is 0x%02x, expected 0x%02x", i, bytes[i],
                        pattern(op.source_rank, op.operation_id, i));
          fail(describe(op) + text);
        }
      }
      bytes_checked += static_cast<std::uint64_t>(op.size);
      landing_.erase(found);
    }
    if (transport::notifies(op)) {
      if (op.tag < 0 || op.tag >= tags) fail(describe(op) + ": bad tag");
      ++notifications_[notification_index(op.source_rank, op.target_rank, op.tag)];
    }
    ++operations_landed;
  }

  void sent(const remote_operation& op) override { sent_.push_back(op); }

  // Per (source world rank, target rank here, tag).
  std::size_t notification_index(int source, int target, int tag) const {
    return (static_cast<std::size_t>(source) * static_cast<std::size_t>(count_) +
            static_cast<std::size_t>(target - start_)) *
               tags +
           static_cast<std::size_t>(tag);
  }
  const std::vector<std::uint64_t>& notifications() const { return notifications_; }
  std::deque<remote_operation>& sent_operations() { return sent_; }
  std::size_t waiting_landings() const { return landing_.size(); }
  std::uint32_t next_sequence(int source, int target) const {
    return next_sequence_[pair(source, target)];
  }

  std::uint64_t bytes_checked = 0;
  std::uint64_t operations_landed = 0;

 private:
  void check_names_a_rank_here(const remote_operation& op) const {
    if (op.target_rank < start_ || op.target_rank >= start_ + count_ || op.source_rank < 0 ||
        op.source_rank >= layout_.world_size()) {
      fail(describe(op) + ": names a rank not of this process");
    }
  }
  std::size_t pair(int source, int target) const {
    return static_cast<std::size_t>(source) * static_cast<std::size_t>(count_) +
           static_cast<std::size_t>(target - start_);
  }
  std::uint64_t key(const remote_operation& op) const {
    return (static_cast<std::uint64_t>(pair(op.source_rank, op.target_rank)) << 32) |
           op.operation_id;
  }

  const bootstrap::rank_layout& layout_;
  int start_, count_;
  std::minstd_rand random_;
  std::vector<std::uint32_t> next_sequence_;  // per (source, target here)
  std::vector<std::uint64_t> notifications_;
  std::map<std::uint64_t, std::unique_ptr<unsigned char[]>> landing_;
  std::deque<remote_operation> sent_;
};

double seconds_wanted(int argc, char** argv) {
  const char* text = std::getenv("DCUDA_SOAK_SECONDS");
  if (text == nullptr || *text == '\0') text = argc > 1 ? argv[1] : "3";
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds > 0 && seconds < 1e5)) {
    fail(std::string("engine_soak: bad duration '") + text + "'");
  }
  return seconds;
}

int soak(int argc, char** argv) {
  int me = 0, processes = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const double seconds = seconds_wanted(argc, argv);
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  // Process p runs 1 + p % 2 ranks.
  const bootstrap::rank_layout layout = bootstrap::exchange_rank_counts(MPI_COMM_WORLD, 1 + me % 2);
  const int world = layout.world_size();
  checking_sink sink(layout, me, seed * 7919 + static_cast<std::uint64_t>(me));
  std::deque<std::vector<unsigned char>> payloads;  // posted, not yet reported sent

  std::mt19937_64 random(seed * 104729 + static_cast<std::uint64_t>(me));
  std::vector<std::uint32_t> sequence(static_cast<std::size_t>(world * world), 0);
  // Sent notifications per (source, target, tag), all world ranks (summed over processes later).
  std::vector<std::uint64_t> notifications_sent(static_cast<std::size_t>(world) * world * tags, 0);
  // After the payloads: it may still send from them while it is torn down.
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, sink, 256u << 10);
  std::size_t in_flight_bytes = 0;
  std::uint64_t posted = 0, bytes_posted = 0, collectives = 0;
  std::uint64_t by_kind[4] = {0, 0, 0, 0};

  const auto release_sent = [&] {
    auto& sent = sink.sent_operations();
    while (!sent.empty()) {
      const remote_operation op = sent.front();
      sent.pop_front();
      if (payloads.empty() || payloads.front().size() != static_cast<std::size_t>(op.size)) {
        fail(describe(op) + ": reported sent out of posting order");
      }
      in_flight_bytes -= payloads.front().size();
      payloads.pop_front();
    }
  };
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };

  for (bool stop = false; !stop;) {
    // One round of operations, then a collective that also decides whether to go on: every
    // process leaves after the same collective.
    for (std::uint64_t i = 0; i < operations_per_collective; ++i) {
      const int source = layout.rank_start(me) +
                         static_cast<int>(random() % static_cast<unsigned>(layout.ranks_of(me)));
      int target = 0;
      do {
        target = static_cast<int>(random() % static_cast<unsigned>(world));
      } while (layout.process_of(target) == me);
      const int kind = 1 + static_cast<int>(random() % 3);
      // Log-uniform 1 B .. 1 MiB.
      const std::size_t size =
          kind == static_cast<int>(operation_kind::notify)
              ? 0
              : std::min(max_size, static_cast<std::size_t>(std::exp2(
                                       std::uniform_real_distribution<double>(0.0, 20.0)(random))));
      const int tag = static_cast<int>(random() % tags);
      while (in_flight_bytes + size > max_in_flight_bytes ||
             payloads.size() >= max_in_flight_operations) {
        if (!engine.progress()) std::this_thread::yield();
        release_sent();
      }
      const std::uint32_t id = ++sequence[static_cast<std::size_t>(source * world + target)];
      std::vector<unsigned char> bytes(size);
      for (std::size_t b = 0; b < size; ++b) bytes[b] = pattern(source, id, b);
      const remote_operation op{kind, source, target, 0, 0, static_cast<std::int64_t>(size),
                                tag,  id};
      payloads.push_back(std::move(bytes));
      in_flight_bytes += size;
      engine.post(op, payloads.back().data());
      if (transport::notifies(op)) {
        ++notifications_sent[(static_cast<std::size_t>(source) * world + target) * tags +
                             static_cast<std::size_t>(tag)];
      }
      ++posted;
      ++by_kind[kind];
      bytes_posted += size;
      engine.progress();
      release_sent();
    }
    const char wants_stop = elapsed() >= seconds ? 1 : 0;
    const std::int32_t call = static_cast<std::int32_t>(++collectives);
    engine.begin_collective(call, {wants_stop, static_cast<char>(me)});
    std::optional<std::vector<transport::mpi_engine::contribution>> all;
    while (!(all = engine.finish_collective())) {
      std::this_thread::yield();
      release_sent();
    }
    release_sent();
    for (int p = 0; p < processes; ++p) {
      const auto& theirs = (*all)[static_cast<std::size_t>(p)];
      if (theirs.call != call || theirs.bytes.size() != 2 || theirs.bytes[1] != p) {
        fail("collective " + std::to_string(call) + ": process " + std::to_string(p) +
             " contributed something else");
      }
      stop = stop || theirs.bytes[0] != 0;
    }
  }
  engine.quiesce();
  release_sent();
  const double took = elapsed();
  if (!payloads.empty() || sink.waiting_landings() != 0) {
    fail("after quiesce: " + std::to_string(payloads.size()) + " payloads not reported sent, " +
         std::to_string(sink.waiting_landings()) + " operations not landed");
  }

  // Every operation sent to this process's ranks arrived (the last sequence numbers match) and
  // every notification was counted.
  std::vector<std::uint32_t> last_sequence(sequence.size());
  MPI_Allreduce(sequence.data(), last_sequence.data(), static_cast<int>(sequence.size()),
                MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
  std::vector<std::uint64_t> all_sent(notifications_sent.size());
  MPI_Allreduce(notifications_sent.data(), all_sent.data(), static_cast<int>(all_sent.size()),
                MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  std::uint64_t notifications_counted = 0;
  for (int target = layout.rank_start(me); target < layout.rank_start(me + 1); ++target) {
    for (int source = 0; source < world; ++source) {
      if (layout.process_of(source) == me) continue;
      const std::uint32_t sent = last_sequence[static_cast<std::size_t>(source * world + target)];
      // The sink expects one past the last it got: none lost at the end.
      if (sink.next_sequence(source, target) != sent + 1) {
        fail("rank " + std::to_string(target) + " got " +
             std::to_string(sink.next_sequence(source, target) - 1) + " operations from rank " +
             std::to_string(source) + ", " + std::to_string(sent) + " were sent");
      }
      for (int tag = 0; tag < tags; ++tag) {
        const std::uint64_t expected =
            all_sent[(static_cast<std::size_t>(source) * world + target) * tags +
                     static_cast<std::size_t>(tag)];
        const std::uint64_t got =
            sink.notifications()[sink.notification_index(source, target, tag)];
        notifications_counted += got;
        if (got != expected) {
          fail("rank " + std::to_string(target) + " counted " + std::to_string(got) +
               " notifications of tag " + std::to_string(tag) + " from rank " +
               std::to_string(source) + ", " + std::to_string(expected) + " were sent");
        }
      }
    }
  }
  std::uint64_t totals[5] = {posted, bytes_posted, sink.operations_landed, sink.bytes_checked,
                             notifications_counted};
  std::uint64_t sums[5] = {};
  MPI_Allreduce(totals, sums, 5, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  std::uint64_t kinds[4] = {};
  MPI_Allreduce(by_kind, kinds, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (sums[0] != sums[2] || sums[1] != sums[3]) {
    fail("operations posted " + std::to_string(sums[0]) + ", landed " + std::to_string(sums[2]) +
         "; bytes posted " + std::to_string(sums[1]) + ", checked " + std::to_string(sums[3]));
  }
  if (me == 0) {
    std::printf("engine_soak: %d processes, %d ranks, %.1f s: %" PRIu64 " operations (%" PRIu64
                " put, %" PRIu64 " put_notify, %" PRIu64 " notify), %" PRIu64
                " bytes, every byte checked, %" PRIu64 " notifications counted, %" PRIu64
                " collectives; 0 lost, 0 reordered, 0 corrupted\n",
                processes, world, took, sums[0], kinds[1], kinds[2], kinds[3], sums[1], sums[4],
                collectives);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bootstrap::mpi_session mpi(&argc, &argv);
  try {
    return soak(argc, argv);
  } catch (const std::exception& e) {  // the engine's own errors
    fail(e.what());
  }
}
