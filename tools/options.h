// dcuda-info's command line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dcuda::info {

struct options {
  int threads_per_rank = 128;
  std::optional<int> registers;              // per thread; unset: the built-in kernel's
  std::optional<std::size_t> shared_bytes;   // per rank; unset: the built-in kernel's, or with
                                             // --registers a bare dcuda_state
  std::vector<std::string> dcuda_arguments;  // --dcuda-* settings, as dcuda_host_init takes them
  bool help = false;
};

// Throws std::invalid_argument naming the bad argument.
options parse_options(int argc, char** argv);

extern const char* const usage;

}  // namespace dcuda::info
