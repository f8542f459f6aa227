// The statistic every benchmark reports: the median of its repetitions, which a single slow
// repetition (a preempted host thread, a clock change) cannot move.
#pragma once

#include <algorithm>
#include <vector>

namespace dcuda_bench {

// Repetitions of each measurement (at least 5); odd, so the median is one
// of the measured values.
inline constexpr int repetitions = 7;

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(values.begin(), middle)) / 2;
}

// The median of the repetitions with their range, as the JSON rows keep it.
struct figure {
  double median = 0;
  double min = 0;
  double max = 0;
};

inline figure summary(const std::vector<double>& values) {
  if (values.empty()) return {};
  return {median(values), *std::min_element(values.begin(), values.end()),
          *std::max_element(values.begin(), values.end())};
}

// One way, in microseconds, from the repetitions' round-trip times (`round_trips` round trips
// each): half a round trip, the median over the repetitions.
inline double median_one_way_us(const std::vector<unsigned long long>& repetition_ns,
                                int round_trips) {
  std::vector<double> one_way_us;
  for (const unsigned long long ns : repetition_ns) {
    one_way_us.push_back(static_cast<double>(ns) / round_trips / 2 / 1000);
  }
  return median(one_way_us);
}

}  // namespace dcuda_bench
