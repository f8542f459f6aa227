// The schedule of bench/alltoall_bandwidth (bench/common/alltoall_schedule.h), on the CPU: for
// P = 2..8 GPUs and several rank counts, one pass is walked put by put as the kernel makes it
// (common/alltoall_passes.cuh). Every pair of ranks of the same index on distinct GPUs gets K
// puts, each to a destination of its own; the areas of different origins at a receiver never
// overlap; the origins a receiver answers are exactly the ranks that send to it.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/alltoall_schedule.h"
#include "test_main.h"

namespace {

using dcuda_bench::alltoall_schedule;

// One put of a pass, as the kernel issues it.
struct put_record {
  int origin;  // world rank of the sender
  int target;  // world rank of the receiver
  int step;
  int slot;
  int source_offset;
  int destination_offset;
};

// Every put of one pass by every rank of every GPU.
std::vector<put_record> one_pass(const alltoall_schedule& schedule) {
  std::vector<put_record> puts;
  for (int gpu = 0; gpu < schedule.gpus; ++gpu) {
    for (int rank = 0; rank < schedule.ranks_per_gpu; ++rank) {
      for (int put = 0; put < schedule.puts_per_pass(); ++put) {
        const int step = schedule.step_of_put(rank, put);
        const int slot = schedule.slot_of_put(put);
        puts.push_back({schedule.world_rank(gpu, rank),
                        schedule.world_rank(schedule.target_gpu(gpu, step), rank), step, slot,
                        schedule.source_offset(slot), schedule.destination_offset(step, slot)});
      }
    }
  }
  return puts;
}

// The schedules tested: P = 2..8 GPUs, ranks per GPU from 1 to an H100's 132, K from 1 to the
// benchmark's cap of 256 / (P - 1), sizes aligned and not.
template <typename Check>
void for_each_schedule(Check check) {
  for (int gpus = 2; gpus <= 8; ++gpus) {
    for (const int ranks : {1, 2, 5, 132}) {
      for (const int puts_per_target : {1, 3, std::max(1, 256 / (gpus - 1))}) {
        for (const int size : {1, 7, 4096}) {
          check(alltoall_schedule{gpus, ranks, puts_per_target, size});
        }
      }
    }
  }
}

std::string describe(const alltoall_schedule& schedule) {
  return "P=" + std::to_string(schedule.gpus) + " R=" + std::to_string(schedule.ranks_per_gpu) +
         " K=" + std::to_string(schedule.puts_per_target) +
         " size=" + std::to_string(schedule.size);
}

DCUDA_TEST(alltoall_every_pair_of_distinct_gpus_gets_k_puts_per_pass) {
  for_each_schedule([](const alltoall_schedule& schedule) {
    const int world = schedule.gpus * schedule.ranks_per_gpu;
    std::vector<int> puts_between(static_cast<std::size_t>(world) * world, 0);  // [origin][target]
    for (const put_record& put : one_pass(schedule)) {
      DCUDA_CHECK(put.step >= 1 && put.step < schedule.gpus);
      DCUDA_CHECK(put.slot >= 0 && put.slot < schedule.puts_per_target);
      ++puts_between[static_cast<std::size_t>(put.origin) * world + put.target];
    }
    for (int origin = 0; origin < world; ++origin) {
      for (int target = 0; target < world; ++target) {
        const bool same_index = origin % schedule.ranks_per_gpu == target % schedule.ranks_per_gpu;
        const bool distinct_gpus =
            origin / schedule.ranks_per_gpu != target / schedule.ranks_per_gpu;
        const int expected = same_index && distinct_gpus ? schedule.puts_per_target : 0;
        const int got = puts_between[static_cast<std::size_t>(origin) * world + target];
        if (got != expected) {
          throw dcuda_test::failure(describe(schedule) + ": world rank " + std::to_string(origin) +
                                    " puts " + std::to_string(got) + " times to world rank " +
                                    std::to_string(target) + ", expected " +
                                    std::to_string(expected));
        }
      }
    }
  });
}

DCUDA_TEST(alltoall_puts_of_a_pass_land_in_disjoint_places_of_their_origins_area) {
  for_each_schedule([](const alltoall_schedule& schedule) {
    const int world = schedule.gpus * schedule.ranks_per_gpu;
    // [target]: the byte ranges written there in one pass, with their origin.
    std::vector<std::vector<std::pair<std::pair<int, int>, int>>> written(
        static_cast<std::size_t>(world));
    for (const put_record& put : one_pass(schedule)) {
      // The source slot lies in the sender's source area, the destination in the area of this
      // origin at the target, which the target checks against the origin's payload.
      DCUDA_CHECK(put.source_offset >= 0 &&
                  put.source_offset + schedule.size <= schedule.area_bytes());
      const int area = schedule.area_offset(put.step);
      DCUDA_CHECK(put.destination_offset >= area &&
                  put.destination_offset + schedule.size <= area + schedule.area_bytes());
      DCUDA_CHECK_EQ(put.destination_offset - area, put.source_offset);  // slot j -> slot j
      DCUDA_CHECK(area >= schedule.area_bytes());  // never over the target's source area
      DCUDA_CHECK(put.destination_offset + schedule.size <= schedule.window_bytes());
      const int target_gpu = put.target / schedule.ranks_per_gpu;
      const int rank = put.target % schedule.ranks_per_gpu;
      DCUDA_CHECK_EQ(schedule.world_rank(schedule.origin_gpu(target_gpu, put.step), rank),
                     put.origin);
      written[static_cast<std::size_t>(put.target)].push_back(
          {{put.destination_offset, put.destination_offset + schedule.size}, put.origin});
    }
    for (auto& ranges : written) {
      std::sort(ranges.begin(), ranges.end());
      // K puts from each of the P - 1 origins, no two overlapping (neither of one origin nor of
      // different origins), so every byte of the destination areas is written exactly once.
      DCUDA_CHECK_EQ(static_cast<int>(ranges.size()), schedule.puts_per_pass());
      for (std::size_t i = 1; i < ranges.size(); ++i) {
        DCUDA_CHECK(ranges[i - 1].first.second <= ranges[i].first.first);
      }
      DCUDA_CHECK_EQ(ranges.front().first.first, schedule.area_bytes());
      DCUDA_CHECK_EQ(ranges.back().first.second, schedule.window_bytes());
    }
  });
}

DCUDA_TEST(alltoall_a_receiver_answers_exactly_the_ranks_that_send_to_it) {
  for_each_schedule([](const alltoall_schedule& schedule) {
    const int world = schedule.gpus * schedule.ranks_per_gpu;
    std::vector<std::set<int>> senders(static_cast<std::size_t>(world));
    for (const put_record& put : one_pass(schedule)) {
      senders[static_cast<std::size_t>(put.target)].insert(put.origin);
    }
    std::vector<int> answers(static_cast<std::size_t>(world), 0);  // [origin]: answers it gets
    for (int gpu = 0; gpu < schedule.gpus; ++gpu) {
      for (int rank = 0; rank < schedule.ranks_per_gpu; ++rank) {
        std::set<int> answered;
        for (int step = 1; step <= schedule.targets(); ++step) {
          const int origin = schedule.world_rank(schedule.origin_gpu(gpu, step), rank);
          answered.insert(origin);
          ++answers[static_cast<std::size_t>(origin)];
        }
        const int receiver = schedule.world_rank(gpu, rank);
        DCUDA_CHECK_EQ(static_cast<int>(answered.size()), schedule.targets());  // one each
        DCUDA_CHECK(answered == senders[static_cast<std::size_t>(receiver)]);
      }
    }
    // Each sender waits for P - 1 answers: one from each of its targets.
    for (const int count : answers) DCUDA_CHECK_EQ(count, schedule.targets());
  });
}

DCUDA_TEST(alltoall_puts_keep_every_link_busy) {
  for_each_schedule([](const alltoall_schedule& schedule) {
    // Any P - 1 consecutive puts of a rank go to P - 1 different GPUs.
    for (int rank = 0; rank < schedule.ranks_per_gpu; ++rank) {
      for (int first = 0; first + schedule.targets() <= schedule.puts_per_pass(); ++first) {
        std::set<int> steps;
        for (int put = first; put < first + schedule.targets(); ++put) {
          steps.insert(schedule.step_of_put(rank, put));
        }
        DCUDA_CHECK_EQ(static_cast<int>(steps.size()), schedule.targets());
      }
    }
    // The ranks of one GPU start at different steps: with at least P - 1 ranks, the first puts
    // of a GPU's ranks go to every other GPU.
    if (schedule.ranks_per_gpu >= schedule.targets()) {
      std::set<int> first_steps;
      for (int rank = 0; rank < schedule.ranks_per_gpu; ++rank) {
        first_steps.insert(schedule.step_of_put(rank, 0));
      }
      DCUDA_CHECK_EQ(static_cast<int>(first_steps.size()), schedule.targets());
    }
  });
}

}  // namespace
