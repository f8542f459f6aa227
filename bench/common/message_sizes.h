// The OSU size sweep: message sizes doubling from `smallest` to 4 MiB, or to
// $DCUDA_BENCH_MAX_SIZE bytes where it is set (a quick run of the small sizes; bench/README.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <vector>

namespace dcuda_bench {

inline constexpr std::size_t KiB = 1024;
inline constexpr std::size_t MiB = 1024 * KiB;
inline constexpr std::size_t GiB = 1024 * MiB;

inline constexpr std::size_t largest_message = 4 * MiB;

inline std::vector<std::size_t> message_sizes(std::size_t smallest = 1) {
  std::size_t largest = largest_message;
  if (const char* limit = std::getenv("DCUDA_BENCH_MAX_SIZE"); limit != nullptr) {
    largest = std::min<std::size_t>(largest, std::strtoull(limit, nullptr, 10));
  }
  std::vector<std::size_t> sizes;
  for (std::size_t size = smallest; size <= largest; size *= 2) sizes.push_back(size);
  return sizes;
}

}  // namespace dcuda_bench
