#include "runtime/cpu_timers.h"

namespace dcuda::runtime {

void cpu_timers::start(clock::time_point now) {
  if (starts_ == 0) first_start_ = now;
  ++starts_;
}

void cpu_timers::stop(clock::time_point now) {
  if (++stops_ < ranks_) return;
  results_.push_back(std::chrono::duration<double, std::milli>(now - first_start_).count());
  starts_ -= ranks_;
  stops_ = 0;
  if (starts_ < 0) starts_ = 0;
}

void cpu_timers::reset() {
  starts_ = stops_ = 0;
  results_.clear();
}

}  // namespace dcuda::runtime
