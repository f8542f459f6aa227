// Run-time settings, from the environment and from the program's arguments (which
// dcuda_host_init receives; an argument wins over the environment). docs/settings.md lists them.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dcuda/detail/protocol/heap_layout.h"
#include "model/model_parameters.h"
#include "runtime/diagnostics.h"

namespace dcuda::runtime {

struct settings {
  std::optional<int> device;                // DCUDA_DEVICE / --dcuda-device=N (default: the
                                            // process's index among those of its node)
  std::optional<int> max_ranks_per_device;  // DCUDA_RANKS_PER_DEVICE / --dcuda-ranks-per-device=N
  double wait_timeout_s = 10.0;             // DCUDA_WAIT_TIMEOUT / --dcuda-wait-timeout=S (0: off)
  double report_wait_after_s = 0.05;        // a device wait this old publishes its state
  bool force_network = false;  // DCUDA_FORCE_NETWORK / --dcuda-force-network=1: no peer path
  bool verbose = false;        // DCUDA_VERBOSE / --dcuda-verbose=1, or debug at INFO or more:
                               // print the path to each process
  log_level debug = log_level::warn;  // DCUDA_DEBUG / --dcuda-debug=WARN|INFO|TRACE (any case);
                                      // DCUDA_VERBOSE=1 raises it to INFO
  bool allow_shared_gpus = false;     // DCUDA_ALLOW_SHARED_GPUS / --dcuda-allow-shared-gpus=1: no
                                      // warning where processes of a node share a GPU
  bool host_world_barrier = false;    // DCUDA_HOST_WORLD_BARRIER / --dcuda-host-world-barrier=1:
                                      // world barriers through the host proxies even within a node
  int emulate_nodes = 1;  // DCUDA_EMULATE_NODES / --dcuda-emulate-nodes=N: each host's processes
                          // as N nodes (bootstrap::discover_layout), reached by the network path
  std::string network_trace;  // DCUDA_NETWORK_TRACE / --dcuda-network-trace=PREFIX: the proxy's
                              // hop times, to PREFIX.<process>.csv (runtime/network_trace.h)
  // DCUDA_NETWORK_CHUNK / --dcuda-network-chunk=BYTES: the pipeline stage of the network path (a
  // power of two, network_chunk_lowest..network_chunk_highest; the same in every process). The
  // value "model": chosen by the performance model at dcuda_host_init (network_chunk_from_model).
  std::size_t network_chunk_bytes = network_chunk_default;
  bool network_chunk_by_model = false;
  // DCUDA_STREAM_COPY_ENGINE_FROM / --dcuda-stream-copy-engine-from=BYTES: a stream-ordered
  // put_notify of at least this many bytes is a copy by the copy engines and a counting kernel;
  // a smaller one is one kernel that copies and counts (runtime/stream_operations.h). 0: always
  // the copy engines; by default one kernel at every size (measured faster up to 4 MiB).
  std::size_t stream_copy_engine_from = stream_copy_engine_from_default;
  // DCUDA_HEAP_BYTES / --dcuda-heap-bytes=BYTES: each rank's heap segment (dcuda_malloc,
  // dcuda_win_allocate), a power of two from heap_lowest to heap_highest, or 0 for no heaps.
  std::size_t heap_bytes = heap_default;

  static constexpr std::size_t network_chunk_default = std::size_t{1} << 20;
  static constexpr std::size_t network_chunk_lowest = std::size_t{64} << 10;
  static constexpr std::size_t network_chunk_highest = std::size_t{16} << 20;
  static constexpr std::size_t heap_default = std::size_t{1} << 20;
  static constexpr std::size_t heap_lowest = std::size_t{1} << protocol::heap_min_order;
  static constexpr std::size_t heap_highest = std::size_t{1} << protocol::heap_max_order;
  static constexpr std::size_t stream_copy_engine_from_default =
      std::numeric_limits<std::size_t>::max();
};

// DCUDA_NETWORK_CHUNK=model: the stage `model` predicts moves large messages fastest
// (model::best_network_chunk over network_chunk_lowest..network_chunk_highest); runtime::error
// with DCUDA_ERROR_SETTING where the model has no network fit of the device initiator.
std::size_t network_chunk_from_model(const model::parameters& model);

// Reads the settings; a malformed value throws runtime::error naming the setting and the value.
settings read_settings(const std::vector<std::string>& arguments,
                       const std::vector<std::pair<std::string, std::string>>& environment);

// The process's environment variables whose names start with DCUDA_.
std::vector<std::pair<std::string, std::string>> dcuda_environment();

// One warning text per DCUDA_* variable or --dcuda-* argument that names no known setting:
// "unknown setting DCUDA_WAIT_TIMOUT (did you mean DCUDA_WAIT_TIMEOUT?)", the suggestion only when
// a known name is within edit distance 3. Known: the settings above, the variables of dcuda's own
// scripts and test suite, and the names of its CMake options (which users may export).
std::vector<std::string> unknown_settings(
    const std::vector<std::string>& arguments,
    const std::vector<std::pair<std::string, std::string>>& environment);

// Levenshtein distance: the fewest insertions, deletions and substitutions from a to b.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace dcuda::runtime
