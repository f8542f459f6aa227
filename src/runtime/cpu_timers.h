// CPU timers of thesis 3.3.3: every rank of the GPU calls dcuda_start_cpu_timer and later
// dcuda_stop_cpu_timer, and the host takes the time when each message arrives. A rank's k-th
// start and k-th stop belong to measurement k, which spans from the first rank's k-th start to
// the last rank's k-th stop: the wall time during which any rank was inside timed region k.
// Ranks may be in different measurements at once; each is kept apart by its number.
#pragma once

#include <chrono>
#include <deque>
#include <vector>

namespace dcuda::runtime {

class cpu_timers {
 public:
  using clock = std::chrono::steady_clock;

  explicit cpu_timers(int ranks)
      : ranks_(ranks),
        starts_(static_cast<std::size_t>(ranks)),
        stops_(static_cast<std::size_t>(ranks)) {}

  // `rank`: index of the rank on this GPU.
  void start(int rank, clock::time_point now);
  void stop(int rank, clock::time_point now);

  // Milliseconds of every completed measurement, in order.
  const std::vector<double>& results() const { return results_; }

 private:
  struct measurement {
    clock::time_point first_start = clock::time_point::max();
    clock::time_point last_stop = clock::time_point::min();
    int stops = 0;
  };
  measurement& measurement_number(std::size_t k);

  int ranks_;
  std::vector<std::size_t> starts_;  // per rank: starts received
  std::vector<std::size_t> stops_;   // per rank: stops received
  std::size_t completed_ = 0;        // measurements before open_.front()
  std::deque<measurement> open_;
  std::vector<double> results_;
};

}  // namespace dcuda::runtime
