// The measured part of the latency benchmarks (local_latency, remote_latency): a ping-pong of
// dcuda_put_notify or dcuda_notify between two ranks, each waiting for the other's notification.
// Each benchmark decides which two ranks ping and how many round trips a repetition makes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/payload.cuh"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

enum class operation : int { put_notify, notify };

// One pinging rank's part. `window` is [send: size][receive: size] (null on ranks that do not
// ping: window creation is collective, so they call this too and only create and free it).
// `starts`: this rank sends first and times each repetition; a rank whose received bytes are
// wrong adds one to `mismatches`.
struct ping_pong_role {
  bool pinging;
  bool starts;
  int peer;  // world rank of the other pinging rank
};

// The tag of every notification of the ping-pong.
inline constexpr int notified_ping_pong_tag = 0;

__device__ inline void run_notified_ping_pong(dcuda_state& gst, const ping_pong_role& role,
                                              operation op, int size, unsigned char* window,
                                              int world_rank, int warmup, int round_trips,
                                              unsigned long long (&repetition_ns)[repetitions],
                                              int* mismatches) {
  constexpr int tag = notified_ping_pong_tag;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, role.pinging ? 2 * size : 0, &win);
  const auto send_one_way = [&] {
    if (op == operation::put_notify) {
      dcuda_put_notify(gst, win, role.peer, /*offset: peer's receive area*/ size, size, window,
                       tag);
    } else {
      dcuda_notify(gst, role.peer, DCUDA_COMM_WORLD, tag);
    }
  };

  if (role.pinging) {  // the same on every thread of the rank, so the calls below stay collective
    fill_payload(window, static_cast<std::uint64_t>(size), world_rank);
    for (int repetition = -1; repetition < repetitions; ++repetition) {
      const int trips = repetition < 0 ? warmup : round_trips;
      const std::uint64_t start = dcuda::device::global_time_ns();
      for (int i = 0; i < trips; ++i) {
        if (role.starts) {
          send_one_way();
          dcuda_wait_notifications(gst, tag, 1);
        } else {
          dcuda_wait_notifications(gst, tag, 1);
          send_one_way();
        }
      }
      if (role.starts && threadIdx.x == 0 && repetition >= 0) {
        repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
      }
    }
    if (!block_holds_payload(window + size, static_cast<std::uint64_t>(size), role.peer) &&
        threadIdx.x == 0) {
      atomicAdd(mismatches, 1);
    }
  }
  dcuda_win_free(gst, win);
}

// Untimed round trips before the first repetition: caches, TLB and the clocks settle.
inline int warmup_for(int round_trips) {
  return std::max(round_trips / 10, 10);
}

// One way, in microseconds: half a round trip; the median over the repetitions, and their range
// (what bench/regression_guard.py takes as the figure's spread).
struct one_way_figure {
  double median_us, min_us, max_us;
};
inline one_way_figure one_way_us(const unsigned long long (&repetition_ns)[repetitions],
                                 int round_trips) {
  std::vector<double> one_way;
  for (const unsigned long long ns : repetition_ns) {
    one_way.push_back(static_cast<double>(ns) / round_trips / 2 / 1000);
  }
  const auto [low, high] = std::minmax_element(one_way.begin(), one_way.end());
  return {median(one_way), *low, *high};
}
inline double median_one_way_us(const unsigned long long (&repetition_ns)[repetitions],
                                int round_trips) {
  return one_way_us(repetition_ns, round_trips).median_us;
}

}  // namespace dcuda_bench
