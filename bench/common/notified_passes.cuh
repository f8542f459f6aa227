// The measured part of the bandwidth benchmarks (local_bandwidth, remote_bandwidth): passes of
// back-to-back dcuda_put_notify, each answered by one dcuda_notify, timed between barriers of
// every rank. Each benchmark decides who sends to whom and how large a pass is (its plan_for).
#pragma once

#include <algorithm>
#include <cstddef>

#include "common/message_sizes.h"
#include "common/payload.cuh"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

// How one size is measured: what a pass is, how many passes a repetition makes, and the memory
// each sending or receiving rank exposes ([source: slots * size][destination: slots * size]).
struct transfer_plan {
  int puts_per_pass;  // K
  int slots;          // distinct source and destination offsets; put i uses slot i % slots
  int passes;         // per repetition
  int warmup_passes;
  std::size_t pass_bytes;    // payload of one pass, all senders together
  std::size_t window_bytes;  // what each sending or receiving rank exposes
};

// Bytes each copy of the memcpy reference moves for a pass of `pass_bytes`: the pass itself,
// but at least 256 MiB from 1 MiB messages on and at most 1 GiB.
inline std::size_t reference_copy_bytes(std::size_t size, std::size_t pass_bytes) {
  const std::size_t least = size >= MiB ? 256 * MiB : 1;
  return std::clamp(pass_bytes, least, GiB);
}

// One rank's part, from window creation to window release. A sender puts to `target`, a receiver
// answers `origin`; `sends` and `receives` are the same on every thread of the rank, so the calls
// stay collective. The rank with `times` set writes each repetition's time; a receiver whose
// bytes are wrong adds one to `mismatches`.
struct pass_role {
  bool sends;
  bool receives;
  int target;
  int origin;
  bool times;
};

__device__ inline void run_notified_passes(dcuda_state& gst, const pass_role& role,
                                           const transfer_plan& plan, int size,
                                           unsigned char* window, int world_rank,
                                           unsigned long long (&repetition_ns)[repetitions],
                                           int* mismatches) {
  constexpr int data_tag = 0;
  constexpr int answer_tag = 1;
  const int area = plan.slots * size;  // bytes of the source area, and of the destination area
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, window != nullptr ? 2 * area : 0, &win);
  if (role.sends) fill_payload(window, static_cast<std::uint64_t>(area), world_rank);

  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int passes = repetition < 0 ? plan.warmup_passes : plan.passes;
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every sender starts now
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int pass = 0; pass < passes; ++pass) {
      if (role.sends) {
        for (int i = 0; i < plan.puts_per_pass; ++i) {
          const int slot_offset = (i % plan.slots) * size;
          dcuda_put_notify(gst, win, role.target, area + slot_offset, size, window + slot_offset,
                           data_tag);
        }
      }
      if (role.receives) {
        dcuda_wait_notifications(gst, data_tag, plan.puts_per_pass);
        dcuda_notify(gst, role.origin, DCUDA_COMM_WORLD, answer_tag);
      }
      if (role.sends) dcuda_wait_notifications(gst, answer_tag, 1);
    }
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every receiver has all its data
    if (role.times && threadIdx.x == 0 && repetition >= 0) {
      repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }

  if (role.receives &&
      !block_holds_payload(window + area, static_cast<std::uint64_t>(area), role.origin) &&
      threadIdx.x == 0) {
    atomicAdd(mismatches, 1);
  }
  dcuda_win_free(gst, win);
}

}  // namespace dcuda_bench
