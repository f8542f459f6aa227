// The measured part of alltoall_bandwidth: passes in which every rank puts K messages to the rank
// of its own index on every other GPU (alltoall_schedule.h), waits for the K * (P - 1) puts of
// its origins, answers each origin with one dcuda_notify and waits for its own P - 1 answers.
// Repetitions of passes are timed between barriers of every rank, as in notified_passes.cuh.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/alltoall_schedule.h"
#include "common/payload.cuh"
#include "common/statistics.h"
#include "dcuda/device.cuh"
#include "dcuda/detail/device/clock.cuh"

namespace dcuda_bench {

// How one size is measured: the schedule of a pass and how many passes a repetition makes.
struct alltoall_plan {
  alltoall_schedule schedule;
  int passes;  // per repetition
  int warmup_passes;
  std::size_t pass_bytes;  // payload of one pass, all ranks of all GPUs together
};

// One rank's part, from window creation to window release. `gpu` is this rank's process, `rank`
// its device rank; a rank at or above the schedule's ranks_per_gpu (none while every GPU runs as
// many ranks) only takes part in the barriers. `window` holds schedule.window_bytes() bytes of a
// taking part rank. The rank with `times` set writes each repetition's time; every origin area
// whose bytes are wrong after the last pass adds one to `mismatches`.
__device__ inline void run_alltoall_passes(dcuda_state& gst, const alltoall_plan& plan, int gpu,
                                           int rank, bool times, unsigned char* window,
                                           unsigned long long (&repetition_ns)[repetitions],
                                           int* mismatches) {
  constexpr int data_tag = 0;
  constexpr int answer_tag = 1;
  const alltoall_schedule& schedule = plan.schedule;
  const bool takes_part = rank < schedule.ranks_per_gpu;
  const int world_rank = schedule.world_rank(gpu, rank);
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, takes_part ? schedule.window_bytes() : 0, &win);
  if (takes_part) {
    fill_payload(window, static_cast<std::uint64_t>(schedule.area_bytes()), world_rank);
  }

  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int passes = repetition < 0 ? plan.warmup_passes : plan.passes;
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every rank starts now
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int pass = 0; pass < passes && takes_part; ++pass) {
      for (int put = 0; put < schedule.puts_per_pass(); ++put) {
        const int step = schedule.step_of_put(rank, put);
        const int slot = schedule.slot_of_put(put);
        const int target = schedule.world_rank(schedule.target_gpu(gpu, step), rank);
        dcuda_put_notify(gst, win, target, schedule.destination_offset(step, slot), schedule.size,
                         window + schedule.source_offset(slot), data_tag);
      }
      // The origins' puts of this pass: none of the next pass can be among them, since an origin
      // starts its next pass only after this rank's answer.
      dcuda_wait_notifications(gst, data_tag, schedule.puts_per_pass());
      for (int step = 1; step <= schedule.targets(); ++step) {
        dcuda_notify(gst, schedule.world_rank(schedule.origin_gpu(gpu, step), rank),
                     DCUDA_COMM_WORLD, answer_tag);
      }
      dcuda_wait_notifications(gst, answer_tag, schedule.targets());
    }
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every receiver has all its data
    if (times && threadIdx.x == 0 && repetition >= 0) {
      repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }

  for (int step = 1; step <= schedule.targets() && takes_part; ++step) {
    const int origin = schedule.world_rank(schedule.origin_gpu(gpu, step), rank);
    if (!block_holds_payload(window + schedule.area_offset(step),
                             static_cast<std::uint64_t>(schedule.area_bytes()), origin) &&
        threadIdx.x == 0) {
      atomicAdd(mismatches, 1);
    }
  }
  dcuda_win_free(gst, win);
}

}  // namespace dcuda_bench
