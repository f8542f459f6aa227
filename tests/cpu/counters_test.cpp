// Notification counters and the device barrier, with host threads standing in for ranks.
#include <atomic>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/barrier.h"
#include "dcuda/detail/protocol/notification_counters.h"
#include "test_main.h"

using namespace dcuda::protocol;

DCUDA_TEST(notifications_available_handles_wraparound) {
  DCUDA_CHECK(notifications_available(5, 3, 2));
  DCUDA_CHECK(!notifications_available(5, 3, 3));
  DCUDA_CHECK(notifications_available(0, 0, 0));
  // arrived wrapped past 2^32, consumed did not yet
  DCUDA_CHECK(notifications_available(2u, 0xfffffffeu, 4));
  DCUDA_CHECK(!notifications_available(2u, 0xfffffffeu, 5));
  DCUDA_CHECK_EQ(notifications_pending(2u, 0xfffffffeu), 4u);
  DCUDA_CHECK_EQ(counter_index(3, 7), 3u * 256u + 7u);
}

DCUDA_TEST(a_wait_takes_ranks_notifications_first_then_host_initiated_ones) {
  // Enough from ranks alone: none from the host.
  DCUDA_CHECK_EQ(split_notifications(5, 3).from_ranks, 3u);
  DCUDA_CHECK_EQ(split_notifications(5, 3).from_host, 0u);
  DCUDA_CHECK_EQ(split_notifications(3, 3).from_host, 0u);
  // The rest from the host.
  DCUDA_CHECK_EQ(split_notifications(1, 4).from_ranks, 1u);
  DCUDA_CHECK_EQ(split_notifications(1, 4).from_host, 3u);
  DCUDA_CHECK_EQ(split_notifications(0, 2).from_host, 2u);
  DCUDA_CHECK_EQ(split_notifications(0, 0).from_ranks + split_notifications(0, 0).from_host, 0u);
  // Availability adds both kinds without wrapping.
  DCUDA_CHECK(notifications_available_from_both(1, 3, 4));
  DCUDA_CHECK(!notifications_available_from_both(1, 2, 4));
  DCUDA_CHECK(notifications_available_from_both(0xffffffffu, 0xffffffffu, 0xffffffffu));
  DCUDA_CHECK(!notifications_available_from_both(0x80000000u, 0x7ffffffeu, 0xffffffffu));
  // Pending counts from counters that wrapped, as the wait computes them.
  DCUDA_CHECK_EQ(split_notifications(notifications_pending(2u, 0xfffffffeu), 6).from_host, 2u);
}

DCUDA_TEST(notifications_from_many_threads_are_all_counted_across_wrap) {
  // 8 "ranks" each notify 5000 times; the counter starts 1000 below the wrap point.
  const std::uint32_t start = 0xffffffffu - 1000u;
  std::uint32_t counter = start;
  std::vector<std::thread> senders;
  for (int t = 0; t < 8; ++t) {
    senders.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        device_atomic<std::uint32_t>(counter).fetch_add(1u, cuda::memory_order_release);
      }
    });
  }
  // The waiting "rank" consumes in batches of 7 as in dcuda_wait_notifications.
  std::uint32_t consumed = start;
  std::uint32_t batches = 0;
  while (batches < 40000u / 7u) {
    const std::uint32_t arrived =
        device_atomic<std::uint32_t>(counter).load(cuda::memory_order_acquire);
    if (notifications_available(arrived, consumed, 7)) {
      consumed += 7;
      ++batches;
    }
  }
  for (auto& s : senders) s.join();
  DCUDA_CHECK_EQ(notifications_pending(counter, consumed), 40000u % 7u);
  DCUDA_CHECK(counter < start);  // it did wrap
}

namespace {

// Runs `episodes` barriers among `ranks` threads; each thread records which episode it is in, and
// after every barrier checks that nobody is still in an earlier one.
void run_barrier(std::uint32_t ranks, std::uint32_t first_episode, std::uint32_t episodes) {
  std::uint32_t arrivals = barrier_target(first_episode, ranks);
  std::vector<std::atomic<std::uint32_t>> in_episode(ranks);
  for (auto& e : in_episode) e = first_episode;
  std::atomic<int> violations{0};
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      std::uint32_t episode = first_episode;
      for (std::uint32_t i = 0; i < episodes; ++i) {
        ++episode;
        in_episode[r] = episode;
        device_atomic<std::uint32_t>(arrivals).fetch_add(1u, cuda::memory_order_acq_rel);
        const std::uint32_t target = barrier_target(episode, ranks);
        while (!reached(device_atomic<std::uint32_t>(arrivals).load(cuda::memory_order_acquire),
                        target)) {
          std::this_thread::yield();
        }
        for (std::uint32_t other = 0; other < ranks; ++other) {
          if (!reached(in_episode[other].load(), episode)) ++violations;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  DCUDA_CHECK_EQ(violations.load(), 0);
  DCUDA_CHECK_EQ(arrivals, barrier_target(first_episode + episodes, ranks));
}

}  // namespace

DCUDA_TEST(barrier_lets_no_rank_pass_early) {
  run_barrier(6, 0, 3000);
}

DCUDA_TEST(barrier_survives_counter_wraparound) {
  // episodes * ranks crosses 2^32 in the middle of the run
  const std::uint32_t ranks = 5;
  run_barrier(ranks, 0xffffffffu / ranks - 200u, 400);
}

DCUDA_TEST(barrier_missing_counts_absent_ranks) {
  DCUDA_CHECK_EQ(barrier_missing(barrier_target(3, 4) - 1, 3, 4), 1u);
  DCUDA_CHECK_EQ(barrier_missing(barrier_target(3, 4), 3, 4), 0u);
  DCUDA_CHECK_EQ(barrier_missing(barrier_target(2, 4), 3, 4), 4u);
}
