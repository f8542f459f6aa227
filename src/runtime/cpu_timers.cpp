#include "runtime/cpu_timers.h"

#include <algorithm>

namespace dcuda::runtime {

cpu_timers::measurement& cpu_timers::measurement_number(std::size_t k) {
  while (open_.size() <= k - completed_) open_.emplace_back();
  return open_[k - completed_];
}

void cpu_timers::start(int rank, clock::time_point now) {
  const std::size_t k = starts_[static_cast<std::size_t>(rank)]++;
  if (k < completed_) return;  // cannot happen for a rank that stops after it starts
  measurement& m = measurement_number(k);
  m.first_start = std::min(m.first_start, now);
}

void cpu_timers::stop(int rank, clock::time_point now) {
  const std::size_t k = stops_[static_cast<std::size_t>(rank)]++;
  if (k < completed_) return;
  measurement& m = measurement_number(k);
  m.last_stop = std::max(m.last_stop, now);
  ++m.stops;
  // Measurements complete in order: a later one waits for the earlier ones.
  while (!open_.empty() && open_.front().stops == ranks_) {
    const measurement& done = open_.front();
    const auto begin =
        done.first_start == clock::time_point::max() ? done.last_stop : done.first_start;
    results_.push_back(std::chrono::duration<double, std::milli>(done.last_stop - begin).count());
    open_.pop_front();
    ++completed_;
  }
}

}  // namespace dcuda::runtime
