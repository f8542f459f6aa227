// The measured part of the latency benchmarks (local_latency, remote_latency): a ping-pong of
// dcuda_put_notify or dcuda_notify between two ranks, each waiting for the other's notification.
// Each benchmark decides which two ranks ping and how many round trips a repetition makes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/payload.cuh"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

enum class operation : int { put_notify, notify };

// Who makes the calls: every thread of the rank together (the rank calls), or thread 0 alone (the
// thread-scoped calls, dcuda/device/thread_calls.cuh), framed by block barriers as the local
// reference frames its flag: a barrier, then thread 0 sends; thread 0 waits, then a barrier. A
// template argument, so that a kernel holds one form's code only: with both in one kernel, the
// rank calls took 0.05-0.12 us longer one way.
enum class call_scope { rank, thread };

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

template <call_scope scope = call_scope::rank>
__device__ inline void run_notified_ping_pong(dcuda_state& gst, const ping_pong_role& role,
                                              operation op, int size, unsigned char* window,
                                              int world_rank, int warmup, int round_trips,
                                              unsigned long long (&repetition_ns)[repetitions],
                                              int* mismatches) {
  constexpr int tag = notified_ping_pong_tag;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, role.pinging ? 2 * size : 0, &win);
  const auto send_one_way = [&] {
    if constexpr (scope == call_scope::thread) {
      __syncthreads();
      if (threadIdx.x != 0) return;
      if (op == operation::put_notify) {
        dcuda_put_notify_thread(gst, win, role.peer, size, size, window, tag);
      } else {
        dcuda_notify_thread(gst, role.peer, DCUDA_COMM_WORLD, tag);
      }
    } else if (op == operation::put_notify) {
      dcuda_put_notify(gst, win, role.peer, /*offset: peer's receive area*/ size, size, window,
                       tag);
    } else {
      dcuda_notify(gst, role.peer, DCUDA_COMM_WORLD, tag);
    }
  };
  const auto receive_one_way = [&] {
    if constexpr (scope == call_scope::thread) {
      if (threadIdx.x == 0) dcuda_wait_notifications_thread(gst, tag, 1);
      __syncthreads();
    } else {
      dcuda_wait_notifications(gst, tag, 1);
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
          receive_one_way();
        } else {
          receive_one_way();
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

// Round trips per repetition on the peer path: 20000, fewer for large messages so that a
// repetition moves at most 128 MiB each way, at least 100.
inline int peer_round_trips_for(std::size_t size) {
  const std::size_t capped = size == 0 ? 20000 : (std::size_t{128} << 20) / size;
  return static_cast<int>(std::clamp<std::size_t>(capped, 100, 20000));
}

// What one dcuda_host_run of run_two_process_ping_pong measures, and its results (the user data
// of the run; each process passes its own).
struct two_process_latency_run {
  operation op;
  int size;               // payload bytes of dcuda_put_notify
  int warmup;             // round trips before the first timed repetition
  int round_trips;        // per repetition
  unsigned char* window;  // this process's first rank exposes [send: size][receive: size]
  unsigned long long repetition_ns[repetitions];  // written by world rank 0
  int mismatches;                                 // ranks of this process with wrong bytes
};

// The body of a benchmark kernel over 2 processes: the first rank of each process pings the
// other's (the other ranks only take part in the collective calls).
__device__ inline void run_two_process_ping_pong(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  two_process_latency_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int world_rank = 0;
  int device_rank = 0;
  int device_ranks = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &device_ranks);
  // Process 0 owns world ranks [0, n0), so its first rank is world rank 0 and the first rank of
  // process 1 is world rank n0 = process 0's rank count.
  const bool first_process = world_rank == device_rank;
  const bool pinging = device_rank == 0;
  const int peer = first_process ? device_ranks : 0;
  unsigned char* window = pinging ? run->window : nullptr;
  run_notified_ping_pong(gst, ping_pong_role{pinging, first_process, peer}, run->op, run->size,
                         window, world_rank, run->warmup, run->round_trips, run->repetition_ns,
                         &run->mismatches);
  dcuda_gpu_finish(gst);
}

// The body of a benchmark kernel whose every process runs its own ping-pong between its first two
// ranks, on its own GPU (the same-GPU path); `run->window` holds [send: size][receive: size] of
// each of the two ranks, one after the other, and each process's first rank times it.
__device__ inline void run_same_gpu_ping_pong(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  two_process_latency_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int world_rank = 0;
  int device_rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  const bool pinging = device_rank < 2;
  const int peer = device_rank == 0 ? world_rank + 1 : world_rank - 1;
  unsigned char* window = pinging ? run->window + device_rank * 2 * run->size : nullptr;
  run_notified_ping_pong(gst, ping_pong_role{pinging, device_rank == 0, peer}, run->op, run->size,
                         window, world_rank, run->warmup, run->round_trips, run->repetition_ns,
                         &run->mismatches);
  dcuda_gpu_finish(gst);
}

}  // namespace dcuda_bench
