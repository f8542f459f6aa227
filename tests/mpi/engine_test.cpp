// The network engine between real processes, with host memory regions standing in for the
// windows of the ranks: every byte, every notification, issue order, completion, refusals.
#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/mpi_session.h"
#include "bootstrap/process_layout.h"
#include "mpi_test_main.h"
#include "runtime/error.h"
#include "transport/mpi_engine.h"

using namespace dcuda;
using transport::operation_kind;
using transport::remote_operation;

namespace {

constexpr std::size_t large_window = 9u << 20;   // window 0
constexpr std::size_t small_window = 64u << 10;  // window 1

unsigned char pattern(int source_rank, std::uint32_t operation, std::size_t i) {
  return static_cast<unsigned char>(source_rank * 131 + static_cast<int>(operation) * 31 +
                                    static_cast<int>(i % 251) * 7);
}

// The ranks of this process, as the runtime will hold them: windows and notification counters.
class host_ranks : public transport::delivery {
 public:
  explicit host_ranks(const bootstrap::rank_layout& layout)
      : start_(layout.rank_start(mpi_test::process_index())),
        count_(layout.ranks_of(mpi_test::process_index())) {
    for (int r = 0; r < count_; ++r) {
      windows_.push_back({std::vector<unsigned char>(large_window, 0),
                          std::vector<unsigned char>(small_window, 0)});
      notifications_.emplace_back();
      notifications_.back().fill(0);
    }
  }

  bool ready_for(const remote_operation& op) override { return !hold || !hold(op); }
  void* landing_address(const remote_operation& op) override {
    const int local = op.target_rank - start_;
    if (local < 0 || local >= count_ || op.window < 0 || op.window > 1) return nullptr;
    auto& window = windows_[static_cast<std::size_t>(local)][static_cast<std::size_t>(op.window)];
    if (op.offset < 0 || static_cast<std::size_t>(op.offset + op.size) > window.size()) {
      return nullptr;
    }
    return window.data() + op.offset;
  }
  void landed(const remote_operation& op, void* landing) override {
    if (transport::carries_payload(op) && landing != landing_address(op)) ++wrong_landings;
    if (!transport::notifies(op)) return;
    ++notifications_[static_cast<std::size_t>(op.target_rank - start_)]
                    [static_cast<std::size_t>(op.tag)];
    if (on_notify) on_notify(op);
  }
  void sent(const remote_operation& op) override { sent_.push_back(op); }

  std::vector<unsigned char>& window(int local, int which) {
    return windows_[static_cast<std::size_t>(local)][static_cast<std::size_t>(which)];
  }
  std::uint32_t notifications(int local, int tag) const {
    return notifications_[static_cast<std::size_t>(local)][static_cast<std::size_t>(tag)];
  }
  const std::vector<remote_operation>& sent_operations() const { return sent_; }

  std::function<void(const remote_operation&)> on_notify;
  std::function<bool(const remote_operation&)> hold;  // true: not now (a busy delivery agent)
  int wrong_landings = 0;  // landed() named another address than landing_address() gave

 private:
  int start_, count_;
  std::vector<std::array<std::vector<unsigned char>, 2>> windows_;
  std::vector<std::array<std::uint32_t, 256>> notifications_;
  std::vector<remote_operation> sent_;
};

// This process and its neighbours on the ring of all processes.
struct ring_position {
  int me, next, previous;
};
ring_position ring_of_processes() {
  const int me = mpi_test::process_index(), count = mpi_test::process_count();
  return {me, (me + 1) % count, (me + count - 1) % count};
}

// Process p runs 2 + p % 2 ranks.
bootstrap::rank_layout test_layout() {
  return bootstrap::exchange_rank_counts(MPI_COMM_WORLD, 2 + mpi_test::process_index() % 2);
}

remote_operation operation(operation_kind kind, int source, int target, int window,
                           std::int64_t offset, std::int64_t size, int tag, std::uint32_t id) {
  return {static_cast<std::int32_t>(kind), source, target, window, offset, size, tag, id};
}

std::vector<unsigned char> payload(int source, std::uint32_t id, std::size_t size) {
  std::vector<unsigned char> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = pattern(source, id, i);
  return bytes;
}

bool holds_pattern(const unsigned char* at, int source, std::uint32_t id, std::size_t size,
                   std::size_t step = 1) {
  for (std::size_t i = 0; i < size; i += step) {
    if (at[i] != pattern(source, id, i)) return false;
  }
  return size == 0 || at[size - 1] == pattern(source, id, size - 1);
}

// A communicator on which this process can send as an engine would: the duplicate of the world
// made in the same collective call as the other processes' engines make theirs, after which it
// joins their agreement on the chunk size (mpi_engine's constructor).
MPI_Comm impersonate_engine(std::size_t chunk_bytes) {
  MPI_Comm raw = MPI_COMM_NULL;
  DCUDA_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &raw));
  const auto chunk = static_cast<long long>(chunk_bytes);
  long long extremes[2] = {chunk, -chunk};
  DCUDA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_LONG_LONG, MPI_MAX, raw));
  return raw;
}

// Process 0 progresses its engine until it fails; the error must be a peer's fault.
std::string next_peer_refusal(transport::mpi_engine& engine) {
  for (;;) {
    try {
      if (!engine.progress()) std::this_thread::yield();
    } catch (const runtime::error& e) {
      DCUDA_CHECK(e.code() == DCUDA_ERROR_PEER);
      return std::string(e.what());
    }
  }
}

void expect_mention(const std::string& text, const std::string& word) {
  if (text.find(word) == std::string::npos) {
    throw dcuda_test::failure("\"" + text + "\" does not mention \"" + word + "\"");
  }
}

}  // namespace

DCUDA_TEST(ring_put_notify_delivers_every_size) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, 256u << 10);
  const auto [me, next, previous] = ring_of_processes();
  std::uint32_t id = 0;
  for (const std::size_t size : {std::size_t{1}, std::size_t{3}, std::size_t{4096},
                                 std::size_t{1000003}, std::size_t{8u << 20}}) {
    ++id;
    std::vector<std::vector<unsigned char>> sources;
    for (int r = 0; r < layout.ranks_of(me) && r < layout.ranks_of(next); ++r) {
      const int source = layout.rank_start(me) + r;
      sources.push_back(payload(source, id, size));
      engine.post(operation(operation_kind::put_notify, source, layout.rank_start(next) + r, 0, 0,
                            static_cast<std::int64_t>(size), 3, id),
                  sources.back().data());
    }
    engine.quiesce();
    for (int r = 0; r < layout.ranks_of(me) && r < layout.ranks_of(previous); ++r) {
      DCUDA_CHECK(
          holds_pattern(ranks.window(r, 0).data(), layout.rank_start(previous) + r, id, size));
      DCUDA_CHECK_EQ(ranks.notifications(r, 3), id);
    }
  }
  DCUDA_CHECK_EQ(ranks.wrong_landings, 0);
}

DCUDA_TEST(all_to_all_reaches_every_remote_rank) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks);
  const int me = mpi_test::process_index();
  std::vector<std::vector<unsigned char>> sources;
  std::uint32_t id = 0;
  for (int r = 0; r < layout.ranks_of(me); ++r) {
    const int source = layout.rank_start(me) + r;
    for (int target = 0; target < layout.world_size(); ++target) {
      if (layout.process_of(target) == me) continue;
      sources.push_back(payload(source, ++id, 100));
      engine.post(
          operation(operation_kind::put_notify, source, target, 1, source * 100, 100, 5, id),
          sources.back().data());
    }
  }
  engine.quiesce();
  const int remote_ranks = layout.world_size() - layout.ranks_of(me);
  for (int r = 0; r < layout.ranks_of(me); ++r) {
    DCUDA_CHECK_EQ(ranks.notifications(r, 5), static_cast<std::uint32_t>(remote_ranks));
  }
  // Every remote source's 100 bytes are where it put them (ids are recomputed the same way).
  for (int p = 0; p < mpi_test::process_count(); ++p) {
    if (p == me) continue;
    std::uint32_t their_id = 0;
    for (int r = 0; r < layout.ranks_of(p); ++r) {
      const int source = layout.rank_start(p) + r;
      for (int target = 0; target < layout.world_size(); ++target) {
        if (layout.process_of(target) == p) continue;
        ++their_id;
        if (layout.process_of(target) != me) continue;
        const int local = target - layout.rank_start(me);
        DCUDA_CHECK(
            holds_pattern(ranks.window(local, 1).data() + source * 100, source, their_id, 100));
      }
    }
  }
}

DCUDA_TEST(notifications_arrive_after_all_earlier_data_of_their_source) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  // Small chunks: the 8 MiB put is 32 messages, the notify that follows it only one.
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, 256u << 10);
  const auto [me, next, previous] = ring_of_processes();
  const int source = layout.rank_start(me), target = layout.rank_start(next);
  const int expected_source = layout.rank_start(previous);
  int order_violations = 0;
  ranks.on_notify = [&](const remote_operation& op) {
    // At tag 7 the 8 MiB put before it must have landed, at tag 8 the 16 bytes as well.
    if (op.tag == 7 &&
        !holds_pattern(ranks.window(0, 0).data(), expected_source, 1, 8u << 20, 4093)) {
      ++order_violations;
    }
    if (op.tag == 8 && !holds_pattern(ranks.window(0, 1).data(), expected_source, 3, 16)) {
      ++order_violations;
    }
  };
  const auto big = payload(source, 1, 8u << 20);
  const auto small = payload(source, 3, 16);
  engine.post(operation(operation_kind::put, source, target, 0, 0, 8 << 20, 0, 1), big.data());
  engine.post(operation(operation_kind::notify, source, target, 0, 0, 0, 7, 2), nullptr);
  engine.post(operation(operation_kind::put_notify, source, target, 1, 0, 16, 8, 3), small.data());
  engine.quiesce();
  DCUDA_CHECK_EQ(order_violations, 0);
  DCUDA_CHECK_EQ(ranks.notifications(0, 7), 1u);
  DCUDA_CHECK_EQ(ranks.notifications(0, 8), 1u);
  DCUDA_CHECK_EQ(ranks.notifications(0, 0), 0u);  // a plain put notifies nobody
}

// The receiver takes only one operation in eight offers, as a busy delivery agent does, while the
// sender posts a burst: thousands of headers wait, and their payload chunks (claimed from MPI as
// they arrive) must still land in the right operation, in order.
DCUDA_TEST(a_held_backlog_delivers_every_chunk_to_its_own_operation) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, 1024);  // 3000 B: 3 chunks
  const auto [me, next, previous] = ring_of_processes();
  const int source = layout.rank_start(me), target = layout.rank_start(next);
  std::uint64_t offers = 0;
  ranks.hold = [&](const remote_operation&) { return ++offers % 8 != 0; };
  std::uint32_t last_id = 0;
  int order_violations = 0;
  ranks.on_notify = [&](const remote_operation& op) {
    if (op.operation_id <= last_id) ++order_violations;
    last_id = op.operation_id;
  };
  // Sizes cycle through one header-only, one single-chunk and one three-chunk payload; operation
  // i writes its own 3000-byte slot of window 0.
  constexpr std::uint32_t operations = 3000;
  const auto size_of = [](std::uint32_t id) -> std::size_t {
    return id % 3 == 0 ? 100 : id % 3 == 1 ? 700 : 3000;
  };
  std::vector<std::vector<unsigned char>> sources;
  for (std::uint32_t id = 1; id <= operations; ++id)
    sources.push_back(payload(source, id, size_of(id)));
  for (std::uint32_t id = 1; id <= operations; ++id) {
    engine.post(operation(operation_kind::put_notify, source, target, 0,
                          static_cast<std::int64_t>(id) * 3000,
                          static_cast<std::int64_t>(size_of(id)), 6, id),
                sources[id - 1].data());
  }
  engine.quiesce();
  DCUDA_CHECK_EQ(ranks.notifications(0, 6), operations);
  DCUDA_CHECK_EQ(order_violations, 0);
  int wrong = 0;
  for (std::uint32_t id = 1; id <= operations; ++id) {
    if (!holds_pattern(ranks.window(0, 0).data() + static_cast<std::size_t>(id) * 3000,
                       layout.rank_start(previous), id, size_of(id))) {
      ++wrong;
    }
  }
  DCUDA_CHECK_EQ(wrong, 0);
  DCUDA_CHECK_EQ(ranks.wrong_landings, 0);
}

DCUDA_TEST(sources_are_reusable_once_reported_sent_in_posting_order) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, 64u << 10);
  const auto [me, next, previous] = ring_of_processes();
  const int source = layout.rank_start(me);
  std::vector<std::vector<unsigned char>> buffers;
  for (std::uint32_t id = 1; id <= 20; ++id) buffers.push_back(payload(source, id, 300000));
  for (std::uint32_t id = 1; id <= 20; ++id) {
    engine.post(operation(operation_kind::put_notify, source, layout.rank_start(next), 0,
                          static_cast<std::int64_t>(id) * 300000, 300000, 9, id),
                buffers[id - 1].data());
  }
  // Overwrite each buffer as soon as the engine gives it back: the receiver must still get the
  // original bytes.
  std::size_t reused = 0;
  while (reused < buffers.size()) {
    if (!engine.progress()) std::this_thread::yield();
    for (; reused < ranks.sent_operations().size(); ++reused) {
      const auto& op = ranks.sent_operations()[reused];
      DCUDA_CHECK_EQ(op.operation_id, static_cast<std::uint32_t>(reused + 1));  // in order
      std::memset(buffers[op.operation_id - 1].data(), 0xee, 300000);
    }
  }
  engine.quiesce();
  DCUDA_CHECK_EQ(ranks.notifications(0, 9), 20u);
  for (std::uint32_t id = 1; id <= 20; ++id) {
    DCUDA_CHECK(holds_pattern(ranks.window(0, 0).data() + static_cast<std::size_t>(id) * 300000,
                              layout.rank_start(previous), id, 300000, 97));
  }
}

DCUDA_TEST(a_put_outside_the_target_window_is_refused_by_name) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, 16u << 10);
  const auto [me, next, previous] = ring_of_processes();
  const auto bytes = payload(0, 1, 64);
  engine.post(operation(operation_kind::put, layout.rank_start(me), layout.rank_start(next), 1,
                        static_cast<std::int64_t>(small_window) - 32, 64, 0, 77),
              bytes.data());
  std::string refusal;
  while (refusal.empty()) {
    try {
      if (!engine.progress()) std::this_thread::yield();
    } catch (const runtime::error& e) {
      refusal = e.what();
    }
  }
  DCUDA_CHECK(refusal.find("operation 77 of rank") != std::string::npos);
  DCUDA_CHECK(refusal.find("does not fit the target's window") != std::string::npos);
  engine.quiesce();  // the engine stays usable after a refusal

  // A refused payload of several chunks: its chunks are drained, not taken for the next
  // operation's.
  const auto refused_bytes = payload(0, 2, small_window + 4096);
  const auto next_bytes = payload(layout.rank_start(me), 3, 5000);
  engine.post(operation(operation_kind::put_notify, layout.rank_start(me), layout.rank_start(next),
                        1, 0, static_cast<std::int64_t>(refused_bytes.size()), 2, 78),
              refused_bytes.data());
  engine.post(operation(operation_kind::put_notify, layout.rank_start(me), layout.rank_start(next),
                        0, 0, 5000, 3, 79),
              next_bytes.data());
  refusal.clear();
  while (ranks.notifications(0, 3) == 0) {
    try {
      if (!engine.progress()) std::this_thread::yield();
    } catch (const runtime::error& e) {
      refusal = e.what();
    }
  }
  DCUDA_CHECK(refusal.find("operation 78 of rank") != std::string::npos);
  DCUDA_CHECK_EQ(ranks.notifications(0, 2), 0u);  // the refused one never counts as landed
  DCUDA_CHECK(holds_pattern(ranks.window(0, 0).data(), layout.rank_start(previous), 3, 5000));
  engine.quiesce();

  bool refused_own = false;
  try {
    engine.post(operation(operation_kind::notify, 0, layout.rank_start(me), 0, 0, 0, 1, 1),
                nullptr);
  } catch (const runtime::error& e) {
    refused_own = std::string(e.what()).find("targets this process") != std::string::npos;
  }
  DCUDA_CHECK(refused_own || layout.ranks_of(me) == 0);
}

DCUDA_TEST(a_collective_completes_after_what_was_sent_before_it_and_names_who_is_missing) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, 256u << 10);
  const auto [me, next, previous] = ring_of_processes();
  const auto big = payload(layout.rank_start(me), 1, 3u << 20);
  engine.post(operation(operation_kind::put_notify, layout.rank_start(me), layout.rank_start(next),
                        0, 0, 3 << 20, 4, 1),
              big.data());

  // Process 0 joins last: every other process first sees it missing, then lets it go on.
  constexpr std::int32_t call = 42;
  const std::vector<char> mine{static_cast<char>('a' + me), static_cast<char>(me)};
  if (me == 0) {
    for (int p = 1; p < mpi_test::process_count(); ++p) {
      int token = 0;
      MPI_Status status;
      // Receiving by polling keeps the engine moving: the others' puts need this process.
      int arrived = 0;
      MPI_Request request = MPI_REQUEST_NULL;
      MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &request);
      while (!arrived) {
        engine.progress();
        MPI_Test(&request, &arrived, &status);
      }
    }
    engine.begin_collective(call, mine);
  } else {
    engine.begin_collective(call, mine);
    const std::vector<int> missing = engine.missing_processes();
    DCUDA_CHECK(std::find(missing.begin(), missing.end(), 0) != missing.end());
    DCUDA_CHECK(!engine.finish_collective());
    const int token = me;
    MPI_Send(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
  }
  std::optional<std::vector<transport::mpi_engine::contribution>> all;
  while (!(all = engine.finish_collective())) std::this_thread::yield();
  DCUDA_CHECK(engine.missing_processes().empty());

  // Complete here means: the previous process's put, sent before it joined, has landed.
  DCUDA_CHECK_EQ(ranks.notifications(0, 4), 1u);
  DCUDA_CHECK(
      holds_pattern(ranks.window(0, 0).data(), layout.rank_start(previous), 1, 3u << 20, 4093));
  DCUDA_CHECK_EQ(static_cast<int>(all->size()), mpi_test::process_count());
  for (int p = 0; p < mpi_test::process_count(); ++p) {
    const auto& theirs = (*all)[static_cast<std::size_t>(p)];
    DCUDA_CHECK_EQ(theirs.call, call);
    DCUDA_CHECK(theirs.bytes ==
                (std::vector<char>{static_cast<char>('a' + p), static_cast<char>(p)}));
  }
  engine.quiesce();
}

// A process that sends malformed headers: a short message, a notify with tag 100000, a notify to
// rank 123456789. Process 1 sends them raw, on a duplicate of the world made in the same
// collective call as the engines' own duplicates (so it is the engines' communicator); process 0
// must stop on each with an error that names process 1 and the bad field, having delivered
// nothing.
DCUDA_TEST(malformed_headers_are_refused_naming_the_sender) {
  const auto layout = test_layout();
  const int me = mpi_test::process_index();
  constexpr int header_tag = 1;  // the engine's tag for operation headers
  if (me == 1) {
    MPI_Comm raw = impersonate_engine(transport::mpi_engine::default_chunk_bytes);
    const char short_header[10] = {};
    DCUDA_MPI_CHECK(MPI_Send(short_header, sizeof short_header, MPI_BYTE, 0, header_tag, raw));
    const remote_operation bad_tag = operation(operation_kind::notify, layout.rank_start(1),
                                               layout.rank_start(0), -1, 0, 0, 100000, 1);
    DCUDA_MPI_CHECK(MPI_Send(&bad_tag, sizeof bad_tag, MPI_BYTE, 0, header_tag, raw));
    const remote_operation bad_target =
        operation(operation_kind::notify, layout.rank_start(1), 123456789, -1, 0, 0, 3, 2);
    DCUDA_MPI_CHECK(MPI_Send(&bad_target, sizeof bad_target, MPI_BYTE, 0, header_tag, raw));
    DCUDA_MPI_CHECK(MPI_Comm_free(&raw));
    return;
  }
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks);
  if (me != 0) return;
  const std::string short_one = next_peer_refusal(engine);
  expect_mention(short_one, "process 1");
  expect_mention(short_one, "10 bytes");
  const std::string tag = next_peer_refusal(engine);
  expect_mention(tag, "process 1");
  expect_mention(tag, "tag 100000");
  const std::string target = next_peer_refusal(engine);
  expect_mention(target, "process 1");
  expect_mention(target, "target rank 123456789");
  for (int r = 0; r < layout.ranks_of(0); ++r) {
    for (int t = 0; t < 256; ++t) DCUDA_CHECK_EQ(ranks.notifications(r, t), 0u);
  }
}

// Teardown after a failure must not wait for a peer: here process 0 destroys its engine with a
// 4 MiB put outstanding that process 1 does not receive yet (it is busy elsewhere). The
// destructor gives up within its bound, and the put's buffers stay valid: process 1 later gets
// every byte.
DCUDA_TEST(teardown_does_not_wait_for_a_peer_that_does_not_receive) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  const int me = mpi_test::process_index();
  std::optional<transport::mpi_engine> engine;
  engine.emplace(MPI_COMM_WORLD, layout, ranks, 1u << 20);
  constexpr std::size_t size = 4u << 20;
  const auto bytes = payload(layout.rank_start(0), 1, size);
  int token = 0;
  if (me == 0) {
    engine->post(operation(operation_kind::put_notify, layout.rank_start(0), layout.rank_start(1),
                           0, 0, static_cast<std::int64_t>(size), 11, 1),
                 bytes.data());
    const auto started = std::chrono::steady_clock::now();
    engine.reset();  // process 1 has posted no receive for the payload
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    DCUDA_CHECK(seconds < 3.0);
    MPI_Send(&token, 1, MPI_INT, 1, 98, MPI_COMM_WORLD);
    // The payload stays here until process 1 has it (the engine's contract for posted payloads).
    MPI_Recv(&token, 1, MPI_INT, 1, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (me == 1) {
    MPI_Recv(&token, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ranks.notifications(0, 11) == 0 && std::chrono::steady_clock::now() < deadline) {
      if (!engine->progress()) std::this_thread::yield();
    }
    DCUDA_CHECK_EQ(ranks.notifications(0, 11), 1u);
    DCUDA_CHECK(holds_pattern(ranks.window(0, 0).data(), layout.rank_start(0), 1, size));
    MPI_Send(&token, 1, MPI_INT, 0, 97, MPI_COMM_WORLD);
  }
  engine.reset();  // no operation outstanding on processes 1 and up: at once
}

// Payloads in chunks of 4 KiB: sizes that are one chunk exactly, one byte more or less, several
// chunks with a short last one, several whole chunks, and a header-only size around them, with
// hundreds of operations in flight from every process at once. Each notification must find every
// earlier payload of its source complete (so the chunks of one operation never land in another's
// place), and every byte must be where it was put.
DCUDA_TEST(chunked_payloads_land_whole_and_in_order_with_many_in_flight) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  constexpr std::size_t chunk = 4096;
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, chunk);
  const auto [me, next, previous] = ring_of_processes();
  const std::size_t sizes[] = {chunk,     chunk + 1,     chunk - 1, 3 * chunk - 1,
                               3 * chunk, 3 * chunk + 1, 200,       7 * chunk + 123};
  // Operation i of a source puts sizes[i % 8] bytes at offset i * 32 KiB of window 0 (a place of
  // its own) and notifies tag 9; the receiver checks, at each notification, that operation's bytes.
  constexpr int operations = static_cast<int>(large_window / (32u << 10));
  const auto size_of = [&](int i) { return sizes[static_cast<std::size_t>(i) % std::size(sizes)]; };
  const auto offset_of = [](int i) { return static_cast<std::size_t>(i) * (32u << 10); };
  const int source = layout.rank_start(me), target = layout.rank_start(next);
  const int expected_source = layout.rank_start(previous);
  int seen = 0;
  int wrong = 0;
  ranks.on_notify = [&](const remote_operation& op) {
    const int i = seen++;
    if (op.operation_id != static_cast<std::uint32_t>(i + 1) ||
        !holds_pattern(ranks.window(0, 0).data() + offset_of(i), expected_source, op.operation_id,
                       size_of(i))) {
      ++wrong;
    }
  };
  std::vector<std::vector<unsigned char>> sources;
  sources.reserve(operations);
  for (int i = 0; i < operations; ++i) {
    const auto id = static_cast<std::uint32_t>(i + 1);
    sources.push_back(payload(source, id, size_of(i)));
    engine.post(operation(operation_kind::put_notify, source, target, 0,
                          static_cast<std::int64_t>(offset_of(i)),
                          static_cast<std::int64_t>(size_of(i)), 9, id),
                sources.back().data());
    engine.progress();
  }
  engine.quiesce();
  DCUDA_CHECK_EQ(seen, operations);
  DCUDA_CHECK_EQ(wrong, 0);
  DCUDA_CHECK_EQ(ranks.notifications(0, 9), static_cast<std::uint32_t>(operations));
  DCUDA_CHECK_EQ(ranks.sent_operations().size(), static_cast<std::size_t>(operations));
  DCUDA_CHECK_EQ(ranks.wrong_landings, 0);
}

// A chunk whose length is not what its header leaves for it: process 1 sends, raw, a put of
// 3000 bytes in chunks of 1024 whose second chunk is 512 bytes short (first run) or 1024 bytes
// long (second run). Process 0 must stop with an error that names process 1, the chunk and the
// operation, having landed and notified nothing.
void refuse_a_bad_chunk(int second_chunk_bytes, const char* mention) {
  const auto layout = test_layout();
  const int me = mpi_test::process_index();
  constexpr std::size_t chunk = 1024;
  constexpr int header_tag = 1, payload_tag = 2;  // the engine's tags
  if (me == 1) {
    MPI_Comm raw = impersonate_engine(chunk);
    const remote_operation put = operation(operation_kind::put_notify, layout.rank_start(1),
                                           layout.rank_start(0), 0, 0, 3000, 4, 1);
    DCUDA_MPI_CHECK(MPI_Send(&put, sizeof put, MPI_BYTE, 0, header_tag, raw));
    const std::vector<char> bytes(2048, 'x');
    DCUDA_MPI_CHECK(MPI_Send(bytes.data(), 1024, MPI_BYTE, 0, payload_tag, raw));
    DCUDA_MPI_CHECK(MPI_Send(bytes.data(), second_chunk_bytes, MPI_BYTE, 0, payload_tag, raw));
    DCUDA_MPI_CHECK(MPI_Send(bytes.data(), 952, MPI_BYTE, 0, payload_tag, raw));
    DCUDA_MPI_CHECK(MPI_Comm_free(&raw));
    return;
  }
  host_ranks ranks(layout);
  transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, chunk);
  if (me != 0) return;
  const std::string refusal = next_peer_refusal(engine);
  expect_mention(refusal, "process 1");
  expect_mention(refusal, "chunk 2 of 3");
  expect_mention(refusal, "operation 1 of rank " + std::to_string(layout.rank_start(1)));
  expect_mention(refusal, mention);
  DCUDA_CHECK_EQ(ranks.notifications(0, 4), 0u);
}

DCUDA_TEST(a_short_payload_chunk_is_refused_naming_the_sender) {
  refuse_a_bad_chunk(512, "with 512 bytes; its header leaves 1024");
}

DCUDA_TEST(a_long_payload_chunk_is_refused_naming_the_sender) {
  refuse_a_bad_chunk(2048, "more than the 1024 bytes");
}

// Both ends count an operation's chunks: processes that chunk differently must all stop at once,
// before any operation, with an error that names the setting.
DCUDA_TEST(processes_with_different_chunk_sizes_stop_naming_the_setting) {
  const auto layout = test_layout();
  host_ranks ranks(layout);
  const std::size_t chunk = mpi_test::process_index() == 1 ? 4096 : 8192;
  try {
    transport::mpi_engine engine(MPI_COMM_WORLD, layout, ranks, chunk);
    throw dcuda_test::failure("the engine started with different chunk sizes");
  } catch (const runtime::error& e) {
    DCUDA_CHECK(e.code() == DCUDA_ERROR_SETTING);
    expect_mention(e.what(), "from 4096 to 8192 bytes");
    expect_mention(e.what(), "DCUDA_NETWORK_CHUNK");
  }
}
