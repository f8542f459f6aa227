// The rings through which the ranks of the other GPUs of a node send to this GPU's ranks
// (protocol/peer_ring.h, docs/design.md "Across GPUs and nodes"): this process allocates the
// memory of its own rings and maps that of every process it reaches by the peer path, once, at
// dcuda_host_init.
#pragma once

#include <cstdint>
#include <vector>

#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/peer_ring.h"
#include "runtime/cuda_memory.h"
#include "runtime/device_buffers.h"
#include "runtime/peer_memory.h"
#include "runtime/process_paths.h"

namespace dcuda::runtime {

// Where every process's rings lie, from the paths and the rank counts alone: the same answer in
// every process. Rings are numbered by peer process in process order, slots by peer rank.
class ring_geometry {
 public:
  ring_geometry(const process_paths& paths, const bootstrap::rank_layout& ranks)
      : paths_(paths), ranks_(ranks) {}

  // Which ring of `owner`'s ranks takes `sender`'s records.
  std::uint32_t ring_peer_index(int owner, int sender) const;
  // Where `target`'s ranks start in `owner`'s slots (its tails and taken).
  std::uint32_t slot_base(int owner, int target) const;
  // The layout of `process`'s ring memory; no rings (peer_gpus 0) without peers.
  protocol::ring_memory_layout layout(int process) const;

 private:
  const process_paths& paths_;
  const bootstrap::rank_layout& ranks_;
};

class peer_rings {
 public:
  // Collective over paths.world where the job has several processes: allocates this GPU's
  // rings, exports them and maps those of the peers; then decides where barriers of
  // DCUDA_COMM_WORLD meet: on the GPUs where every process reaches every other by the peer path
  // and none asks for the hosts (`host_world_barrier`: every process must choose alike, and the
  // setting may differ between them).
  peer_rings(const process_paths& paths, const bootstrap::rank_layout& ranks,
             bool host_world_barrier);
  peer_rings(const peer_rings&) = delete;
  peer_rings& operator=(const peer_rings&) = delete;

  // What the device needs of the rings (runtime/device_buffers.h).
  ring_wiring wiring() const;
  // Where `process`'s ring memory is mapped in this process (null: not mapped, or itself).
  char* mapped(int process) const;

 private:
  protocol::ring_memory_layout layout_;
  device_array<char> memory_;
  peer_mappings mappings_;
  std::vector<char*> mapped_;  // per process, in this GPU's address space (or null)
  // Per ring of this process's ranks (per peer process, in process order): where its rank 0
  // publishes how far it has taken it (null: not reached), and where this GPU's leader writes its
  // word in that process's board (empty: barriers meet through the host proxies).
  std::vector<std::uint32_t*> taken_;
  std::vector<std::uint64_t*> board_out_;
  bool counts_ = false;  // process_paths::peer_atomics
};

}  // namespace dcuda::runtime
