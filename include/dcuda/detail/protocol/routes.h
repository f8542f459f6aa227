// How a rank reaches another (docs/design.md, "Across GPUs and nodes"): on its own GPU by device
// stores and device-scope atomics; on a GPU of another process of the node by peer stores over
// NVLink/PCIe and system-scope atomics into memory mapped with CUDA IPC; anywhere else through the
// host proxies and the network engine. The runtime decides the path per pair of processes at
// dcuda_host_init and writes one rank_route per world rank into device memory.
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

// host_window: a rank's put into a host window (host_window_view.h); never in the route table,
// only in a rank's put route cache, for the put under way.
enum class route : std::uint32_t { local, peer, network, host_window };

struct rank_route {
  std::uint32_t* counters;  // the rank's notification counters [tag_count], in this GPU's
                            // address space (its own memory); null: another GPU
  char* ring;               // peer path: the rank's ring for records from this GPU, mapped
  std::uint32_t path;       // route
  std::uint32_t slot;       // peer path: the rank's slot in this GPU's tails and taken
};
static_assert(sizeof(rank_route) == 24);

constexpr const char* route_name(route path) {
  switch (path) {
    case route::local:
      return "this GPU";
    case route::peer:
      return "peer (GPU stores over NVLink/PCIe, CUDA IPC)";
    case route::network:
      return "network (host proxies, MPI)";
    case route::host_window:
      return "a host window (GPU stores, this GPU or a peer)";
  }
  return "unknown";
}

}  // namespace dcuda::protocol
