// engine_backlog: what a busy receiver costs dcuda's MPI engine (src/transport/mpi_engine.h), on
// the CPU alone: `mpirun -np 2 engine_backlog`, no GPU needed.
//
// Process 0 posts a burst of put_notify operations to process 1, as 131 ranks sending at once do
// through a host proxy. Process 1 takes only one offer in eight, as when its delivery agent is
// busy (first table), or every operation as soon as it is offered (second table): in the first,
// thousands of headers wait while their payloads keep arriving. The figure is the time per
// operation from the first post to the last landing, the median of 5 bursts; the receiver checks
// every byte. The reference is MPI's own time per message of the same size (osu_bw style). Before
// the engine claimed held payloads from MPI, each header's receive scanned every payload waiting in
// MPI's unexpected-message queue, and a burst of 32768 puts of 512 B took ~6 s instead of ~0.1 s
// (docs/notes/performance-history.md, "The all-ranks network stall").
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/process_layout.h"
#include "common/bench_report.h"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "reference/mpi_ping_pong.h"
#include "transport/mpi_engine.h"

namespace {

using namespace dcuda_bench;
using dcuda::transport::operation_kind;
using dcuda::transport::remote_operation;

constexpr const char* benchmark = "engine_backlog";
constexpr int operations = 32768;
constexpr int bursts = 5;
constexpr int slots = 256;  // put i comes from source slot i % 256 and lands in window slot i % 256

unsigned char pattern(int operation, std::size_t i) {
  return static_cast<unsigned char>((operation % slots) * 31 + static_cast<int>(i % 251) * 7);
}

// Process 1's side: one window, a count of landings, and the payload check of each landing.
class receiver final : public dcuda::transport::delivery {
 public:
  receiver(std::size_t size, int accept_one_in) : size_(size), accept_one_in_(accept_one_in) {
    window_.resize(size * slots);
  }
  bool ready_for(const remote_operation& /*op*/) override {
    return ++offers_ % static_cast<std::uint64_t>(accept_one_in_) == 0;
  }
  void* landing_address(const remote_operation& op) override { return window_.data() + op.offset; }
  void landed(const remote_operation& op, void* landing) override {
    const auto* bytes = static_cast<const unsigned char*>(landing);
    const int id = static_cast<int>(op.operation_id);
    if (bytes[0] != pattern(id, 0) || bytes[size_ - 1] != pattern(id, size_ - 1) ||
        id != landed_ + 1) {
      ++wrong_;
    }
    ++landed_;
  }
  void sent(const remote_operation& /*op*/) override {}

  int landed_count() const { return landed_; }
  int wrong() const { return wrong_; }

 private:
  std::size_t size_;
  int accept_one_in_;
  std::uint64_t offers_ = 0;
  std::vector<unsigned char> window_;
  int landed_ = 0;
  int wrong_ = 0;
};

// Process 0's side: the sources stay untouched until the engine has sent them.
class sender final : public dcuda::transport::delivery {
 public:
  void* landing_address(const remote_operation& /*op*/) override { return nullptr; }
  void landed(const remote_operation& /*op*/, void* /*landing*/) override {}
  void sent(const remote_operation& /*op*/) override {}
};

// Microseconds per operation of one burst (process 1 measures; process 0 gets 0).
double burst(const mpi_world& world, std::size_t size, int accept_one_in) {
  const dcuda::bootstrap::rank_layout layout{{0, 1, 2}};
  std::vector<std::vector<unsigned char>> sources;
  for (int slot = 0; world.process() == 0 && slot < slots; ++slot) {
    auto& bytes = sources.emplace_back(size);
    for (std::size_t i = 0; i < size; ++i) bytes[i] = pattern(slot, i);
  }
  receiver landing_side(size, accept_one_in);
  sender sending_side;
  dcuda::transport::delivery& sink =
      world.process() == 0 ? static_cast<dcuda::transport::delivery&>(sending_side) : landing_side;
  dcuda::transport::mpi_engine engine(world.comm(), layout, sink);
  world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
  const double start = MPI_Wtime();
  if (world.process() == 0) {
    for (int id = 1; id <= operations; ++id) {
      const remote_operation op{
          static_cast<std::int32_t>(operation_kind::put_notify),
          0,
          1,
          0,
          static_cast<std::int64_t>(static_cast<std::size_t>(id % slots) * size),
          static_cast<std::int64_t>(size),
          1,
          static_cast<std::uint32_t>(id)};
      engine.post(op, sources[static_cast<std::size_t>(id % slots)].data());
      engine.progress();
    }
  } else {
    while (landing_side.landed_count() < operations) engine.progress();
  }
  const double seconds = MPI_Wtime() - start;
  engine.quiesce();
  if (landing_side.wrong() != 0) {
    fail_job(benchmark, std::to_string(landing_side.wrong()) + " of " + std::to_string(operations) +
                            " operations of " + std::to_string(size) +
                            " B landed wrong or out of order");
  }
  return world.process() == 1 ? seconds * 1e6 / operations : 0.0;
}

// The median over bursts, as process 1 measured it, known to process 0 (which prints).
double median_burst(const mpi_world& world, std::size_t size, int accept_one_in) {
  std::vector<double> times;
  for (int b = 0; b < bursts; ++b) times.push_back(burst(world, size, accept_one_in));
  double value = median(times);
  world.check(MPI_Bcast(&value, 1, MPI_DOUBLE, 1, world.comm()), "MPI_Bcast");
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line =
      parse_options(argc, argv, benchmark,
                    "dcuda's MPI engine receiving a burst of 32768 put_notify operations while "
                    "its receiver is busy, against a receiver that takes each at once (CPU "
                    "only); run it as mpirun -np 2");
  if (world.processes() != 2) {
    fail_job(benchmark, "run it as mpirun -np 2 (" + std::to_string(world.processes()) +
                            " processes were started)");
  }
  std::optional<report> out;
  if (world.prints()) {
    device_info host;
    host.name = "host CPU only (no GPU used)";
    out.emplace(benchmark, command_line, host);
  }
  const std::vector<std::size_t> sizes{64, 512, 4096, 32768};
  // MPI's own time per message of each size: osu_bw style between the same 2 processes.
  std::vector<double> mpi_microseconds;
  for (const std::size_t size : sizes) {
    const mpi_result result = mpi_host_bandwidth(world, size);
    if (!result.data_arrived) {
      fail_job(benchmark, "MPI reference: wrong data received (" + std::to_string(size) + " B)");
    }
    mpi_microseconds.push_back(static_cast<double>(size) / result.value / 1e3);  // GB/s = B/ns
  }
  const std::string reference_detail =
      "MPI_Isend/MPI_Irecv windows of host-buffer messages of the same size between the same 2 "
      "processes (osu_bw style), time per message";
  table busy{"MPI engine, process 0 -> process 1, a burst of " + std::to_string(operations) +
                 " put_notify operations, time per operation; the receiver takes one offer in 8 "
                 "(a busy delivery agent)",
             "us",
             "MPI host",
             reference_detail,
             0,
             0,
             0,
             {}};
  table ready = busy;
  ready.title = "MPI engine, process 0 -> process 1, a burst of " + std::to_string(operations) +
                " put_notify operations, time per operation; the receiver takes each at once";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    busy.rows.push_back({sizes[i], median_burst(world, sizes[i], 8), mpi_microseconds[i]});
    ready.rows.push_back({sizes[i], median_burst(world, sizes[i], 1), mpi_microseconds[i]});
  }
  if (out) {
    out->print(busy);
    out->print(ready);
    // A guard against held operations costing more the more of them wait: before payloads were
    // claimed, 512 B operations took ~300 us each here (~1000 times MPI's time per message).
    const row& small_payload = busy.rows[1];
    out->check(
        {"busy receiver, 512 B puts, 32768 in a burst: time per operation / MPI's per "
         "message",
         "ratio", small_payload.dcuda / small_payload.reference, 25.0, true});
    out->write_json();
  }
  return 0;
}
