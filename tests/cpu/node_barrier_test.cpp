// The world barrier within a node (protocol/node_barrier.h): board words round-trip, a reader
// tells absent, arrived and mismatched words apart across sequence wraparound, and leaders that
// follow device/node_barrier.cuh step by step (host threads, one board each) never let one pass
// a barrier before every other has entered it, and catch a leader that enters with another call.
#include <atomic>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/node_barrier.h"
#include "dcuda/detail/protocol/peer_ring.h"
#include "test_main.h"

namespace {

using namespace dcuda::protocol;

constexpr std::uint32_t comm_barrier_call = 2;
constexpr std::uint32_t win_create_call = 3;

DCUDA_TEST(board_word_round_trips_sequence_and_call) {
  const std::uint64_t word = encode_board_word(0xfedcba98u, comm_barrier_call);
  DCUDA_CHECK_EQ(board_sequence(word), 0xfedcba98u);
  DCUDA_CHECK_EQ(board_call(word), comm_barrier_call);
  // Sequence 0 with call 0 is still a word; a zeroed board slot is none.
  DCUDA_CHECK(encode_board_word(0, 0) != 0u);
  DCUDA_CHECK(read_board_word(encode_board_word(0, 0), 0, 0) == board_verdict::arrived);
  DCUDA_CHECK(read_board_word(0, 0, 0) == board_verdict::absent);
}

DCUDA_TEST(board_word_says_absent_arrived_or_mismatched) {
  const std::uint32_t s = 7;
  DCUDA_CHECK(read_board_word(encode_board_word(s - 1, comm_barrier_call), s, comm_barrier_call) ==
              board_verdict::absent);
  DCUDA_CHECK(read_board_word(encode_board_word(s, comm_barrier_call), s, comm_barrier_call) ==
              board_verdict::arrived);
  // Already in the next collective (whatever its call): it has passed this one.
  DCUDA_CHECK(read_board_word(encode_board_word(s + 1, win_create_call), s, comm_barrier_call) ==
              board_verdict::arrived);
  DCUDA_CHECK(read_board_word(encode_board_word(s, win_create_call), s, comm_barrier_call) ==
              board_verdict::mismatched);
  // Across the wrap of the 32-bit sequence.
  DCUDA_CHECK(read_board_word(encode_board_word(0xffffffffu, 1), 0, 1) == board_verdict::absent);
  DCUDA_CHECK(read_board_word(encode_board_word(0, 1), 0xffffffffu, 1) == board_verdict::arrived);
}

DCUDA_TEST(board_scan_collects_arrivals_and_the_first_mismatch) {
  const std::uint64_t words[] = {
      encode_board_word(4, comm_barrier_call), 0, encode_board_word(4, win_create_call),
      encode_board_word(5, comm_barrier_call), encode_board_word(4, win_create_call)};
  const board_scan scan =
      scan_board([&](std::uint32_t i) { return words[i]; }, 5, 4, comm_barrier_call);
  DCUDA_CHECK_EQ(scan.arrived, 0b01001u);
  DCUDA_CHECK_EQ(scan.mismatched_peer, 2);
  DCUDA_CHECK_EQ(scan.mismatched_call, win_create_call);
  DCUDA_CHECK_EQ(all_peers_mask(5), 0b11111u);
  DCUDA_CHECK_EQ(all_peers_mask(15), 0x7fffu);
}

DCUDA_TEST(board_peers_map_to_processes_without_the_reader) {
  // Process 2 of 5: its ring peers 0, 1, 2, 3 are processes 0, 1, 3, 4.
  DCUDA_CHECK_EQ(board_peer_process(0, 2), 0);
  DCUDA_CHECK_EQ(board_peer_process(1, 2), 1);
  DCUDA_CHECK_EQ(board_peer_process(2, 2), 3);
  DCUDA_CHECK_EQ(board_peer_process(3, 2), 4);
  for (std::int32_t me = 0; me < 16; ++me) {
    for (std::uint32_t peer = 0; peer < 15; ++peer) {
      DCUDA_CHECK_EQ(board_process_bits(1u << peer, me), 1u << board_peer_process(peer, me));
    }
  }
  DCUDA_CHECK_EQ(board_process_bits(0b1111u, 2), 0b11011u);
}

DCUDA_TEST(board_lies_after_the_taken_positions_aligned) {
  for (const std::uint32_t slots : {1u, 131u, 396u, 3931u}) {
    const ring_memory_layout layout{132, 15, slots};
    DCUDA_CHECK(layout.board() >= layout.taken() + slots * 4ull);
    DCUDA_CHECK_EQ(layout.board() % board_word_bytes, 0u);
    DCUDA_CHECK_EQ(layout.bytes(), layout.board() + 15 * board_word_bytes);
  }
}

// One board per leader: boards[reader][ring peer]. Each leader, for `barriers` barriers: writes
// the data its GPU's ranks would have written (data[me] = barrier), posts its word (fence, then a
// store per peer), waits for every other word, and then checks that every leader has written
// its data of this barrier. `odd_one` enters barrier `odd_at` with another call, if set.
struct board_run {
  int passed_early = 0;         // a leader saw another's data from an earlier barrier
  int mismatches_found = 0;     // leaders that stopped on a mismatch
  std::uint32_t completed = 0;  // barriers every leader passed
  std::uint32_t furthest = 0;   // barriers the furthest leader passed
};

board_run run_leaders(std::int32_t leaders, std::uint32_t first_sequence, std::uint32_t barriers,
                      std::int32_t odd_one = -1, std::uint32_t odd_at = 0) {
  const auto peers = static_cast<std::uint32_t>(leaders - 1);
  std::vector<std::vector<std::uint64_t>> boards(static_cast<std::size_t>(leaders),
                                                 std::vector<std::uint64_t>(peers, 0));
  std::vector<std::uint32_t> data(static_cast<std::size_t>(leaders), 0);
  std::atomic<int> passed_early{0}, mismatches{0};
  std::atomic<bool> stop{false};
  std::vector<std::uint32_t> completed(static_cast<std::size_t>(leaders), 0);
  std::vector<std::thread> threads;
  for (std::int32_t me = 0; me < leaders; ++me) {
    threads.emplace_back([&, me] {
      // Ring peer index of `me` in the board of process p (the processes in order, less p).
      const auto index_in = [&](std::int32_t p) {
        return static_cast<std::uint32_t>(me < p ? me : me - 1);
      };
      for (std::uint32_t i = 0; i < barriers; ++i) {
        const std::uint32_t sequence = first_sequence + i;
        const std::uint32_t call =
            me == odd_one && i == odd_at ? win_create_call : comm_barrier_call;
        system_atomic<std::uint32_t>(data[static_cast<std::size_t>(me)])
            .store(sequence, cuda::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);  // fence.release.sys
        for (std::int32_t p = 0; p < leaders; ++p) {
          if (p == me) continue;
          system_atomic<std::uint64_t>(boards[static_cast<std::size_t>(p)][index_in(p)])
              .store(encode_board_word(sequence, call), cuda::memory_order_relaxed);
        }
        std::vector<std::uint64_t>& board = boards[static_cast<std::size_t>(me)];
        for (;;) {
          if (stop.load()) return;
          const board_scan scan = scan_board(
              [&](std::uint32_t peer) {
                return system_atomic<std::uint64_t>(board[peer]).load(cuda::memory_order_relaxed);
              },
              peers, sequence, call);
          if (scan.mismatched_peer >= 0) {
            ++mismatches;
            stop = true;  // the device stops the run
            return;
          }
          if (scan.arrived == all_peers_mask(peers)) break;
          std::this_thread::yield();
        }
        std::atomic_thread_fence(std::memory_order_acquire);  // fence.acquire.sys
        for (std::int32_t p = 0; p < leaders; ++p) {
          const std::uint32_t seen = system_atomic<std::uint32_t>(data[static_cast<std::size_t>(p)])
                                         .load(cuda::memory_order_relaxed);
          if (!reached(seen, sequence)) ++passed_early;
        }
        completed[static_cast<std::size_t>(me)] = i + 1;
      }
    });
  }
  for (auto& t : threads) t.join();
  board_run run;
  run.passed_early = passed_early.load();
  run.mismatches_found = mismatches.load();
  run.completed = completed[0];
  for (const std::uint32_t c : completed) {
    run.completed = c < run.completed ? c : run.completed;
    run.furthest = c > run.furthest ? c : run.furthest;
  }
  return run;
}

DCUDA_TEST(board_lets_no_leader_pass_before_every_other_entered) {
  for (const std::int32_t leaders : {2, 4, 16}) {
    const board_run run = run_leaders(leaders, 1, leaders == 16 ? 300 : 2000);
    DCUDA_CHECK_EQ(run.passed_early, 0);
    DCUDA_CHECK_EQ(run.mismatches_found, 0);
    DCUDA_CHECK_EQ(run.completed, leaders == 16 ? 300u : 2000u);
  }
}

DCUDA_TEST(board_survives_sequence_wraparound) {
  const board_run run = run_leaders(3, 0xffffffffu - 100u, 300);
  DCUDA_CHECK_EQ(run.passed_early, 0);
  DCUDA_CHECK_EQ(run.completed, 300u);
}

DCUDA_TEST(board_catches_a_leader_that_enters_with_another_call) {
  const board_run run = run_leaders(4, 1, 50, /*odd_one=*/2, /*odd_at=*/20);
  DCUDA_CHECK(run.mismatches_found >= 1);
  DCUDA_CHECK_EQ(run.passed_early, 0);
  DCUDA_CHECK_EQ(run.furthest, 20u);  // no leader passed the mismatched barrier
  // Stopping the run (the device traps) may catch a leader still on its way out of the last one.
  DCUDA_CHECK(run.completed >= 19u);
}

}  // namespace
