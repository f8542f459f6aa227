// Which initiator of a notified access is faster at which message sizes, for the line the
// host-initiated benchmarks print under their tables: the sizes where the host's calls were
// faster, as ranges of consecutive sizes, since the two curves may cross more than once (on the
// network path the host's calls win in the middle of the range and lose again at its end).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dcuda_bench {

// "host-initiated was faster at 524288 .. 1048576 bytes; device-initiated as fast or faster at
// every other size", or "device-initiated was as fast or faster at every size" (times: lower is
// better; the three vectors are of the same length).
inline std::string faster_initiator_sizes(const std::vector<std::size_t>& sizes,
                                          const std::vector<double>& host_us,
                                          const std::vector<double>& device_us) {
  std::string ranges;
  for (std::size_t i = 0; i < sizes.size();) {
    if (!(host_us[i] < device_us[i])) {
      ++i;
      continue;
    }
    std::size_t last = i;
    while (last + 1 < sizes.size() && host_us[last + 1] < device_us[last + 1]) ++last;
    if (!ranges.empty()) ranges += ", ";
    ranges += std::to_string(sizes[i]);
    if (last != i) ranges += " .. " + std::to_string(sizes[last]);
    i = last + 1;
  }
  if (ranges.empty()) return "device-initiated was as fast or faster at every size";
  return "host-initiated was faster at " + ranges +
         " bytes; device-initiated as fast or faster at every other size";
}

}  // namespace dcuda_bench
