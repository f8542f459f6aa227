// CPU timers of thesis 3.3.3: every rank of the GPU calls dcuda_start_cpu_timer and later
// dcuda_stop_cpu_timer. One measurement spans from the first start the host receives to the
// last stop, i.e. the wall time during which any rank was inside the timed region.
#pragma once

#include <chrono>
#include <vector>

namespace dcuda::runtime {

class cpu_timers {
 public:
  using clock = std::chrono::steady_clock;

  explicit cpu_timers(int ranks) : ranks_(ranks) {}

  void start(clock::time_point now);
  void stop(clock::time_point now);
  void reset();

  // Milliseconds of every completed measurement, in order.
  const std::vector<double>& results() const { return results_; }

 private:
  int ranks_;
  int starts_ = 0;
  int stops_ = 0;
  clock::time_point first_start_{};
  std::vector<double> results_;
};

}  // namespace dcuda::runtime
