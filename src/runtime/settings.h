// Run-time settings, from the environment and from the program's arguments (which
// dcuda_host_init receives; an argument wins over the environment). docs/settings.md lists them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dcuda::runtime {

struct settings {
  std::optional<int> device;                // DCUDA_DEVICE / --dcuda-device=N (default: the
                                            // process's index among those of its node)
  std::optional<int> max_ranks_per_device;  // DCUDA_RANKS_PER_DEVICE / --dcuda-ranks-per-device=N
  double wait_timeout_s = 10.0;             // DCUDA_WAIT_TIMEOUT / --dcuda-wait-timeout=S (0: off)
  double report_wait_after_s = 0.05;        // a device wait this old publishes its state
  bool force_network = false;  // DCUDA_FORCE_NETWORK / --dcuda-force-network=1: no peer path
  bool verbose = false;        // DCUDA_VERBOSE / --dcuda-verbose=1: print the path to each process
  bool allow_shared_gpus = false;   // DCUDA_ALLOW_SHARED_GPUS / --dcuda-allow-shared-gpus=1: no
                                    // warning where processes of a node share a GPU
  bool host_world_barrier = false;  // DCUDA_HOST_WORLD_BARRIER / --dcuda-host-world-barrier=1:
                                    // world barriers through the host proxies even within a node
  std::string network_trace;  // DCUDA_NETWORK_TRACE / --dcuda-network-trace=PREFIX: the proxy's
                              // hop times, to PREFIX.<process>.csv (runtime/network_trace.h)
};

// Reads the settings; a malformed value throws runtime::error naming the setting and the value.
settings read_settings(const std::vector<std::string>& arguments,
                       const std::vector<std::pair<std::string, std::string>>& environment);

// The process's environment variables whose names start with DCUDA_.
std::vector<std::pair<std::string, std::string>> dcuda_environment();

}  // namespace dcuda::runtime
