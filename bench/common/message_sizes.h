// The OSU size sweep: message sizes doubling from `smallest` to 4 MiB (the performance model's
// micro-benchmarks: to 64 MiB), or to $DCUDA_BENCH_MAX_SIZE bytes where it is set (a quick run of
// the small sizes; bench/README.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace dcuda_bench {

inline constexpr std::size_t KiB = 1024;
inline constexpr std::size_t MiB = 1024 * KiB;
inline constexpr std::size_t GiB = 1024 * MiB;

inline constexpr std::size_t largest_message = 4 * MiB;
// The largest message of the benchmarks whose figures the performance model fits
// (host_stream_latency, host_stream_bandwidth).
inline constexpr std::size_t largest_model_message = 64 * MiB;

inline std::vector<std::size_t> message_sizes(std::size_t smallest = 1,
                                              std::size_t largest = largest_message) {
  if (const char* limit = std::getenv("DCUDA_BENCH_MAX_SIZE"); limit != nullptr) {
    largest = std::min<std::size_t>(largest, std::strtoull(limit, nullptr, 10));
  }
  std::vector<std::size_t> sizes;
  for (std::size_t size = smallest; size <= largest; size *= 2) sizes.push_back(size);
  return sizes;
}

// The sizes of a --sizes=S1,S2,... option (`list` is what follows '='); a size that is not 1 to
// largest_message bytes ends the program with status 2 and a message naming it.
inline std::vector<std::size_t> parse_message_sizes(const std::string& list,
                                                    const char* benchmark) {
  std::vector<std::size_t> sizes;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    char* end = nullptr;
    const unsigned long long size = std::strtoull(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || size == 0 || size > largest_message) {
      std::fprintf(stderr, "%s: --sizes: '%s' is not a size of 1..%zu bytes\n", benchmark,
                   item.c_str(), largest_message);
      std::exit(2);
    }
    sizes.push_back(static_cast<std::size_t>(size));
    at = comma + 1;
  }
  return sizes;
}

}  // namespace dcuda_bench
