// How this process reaches every other process of the job (docs/design.md "Across GPUs and
// nodes"): by the peer path where both GPUs are on one node and map each other's memory, else
// through the network. Decided once at dcuda_host_init, alike in every process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/routes.h"

namespace dcuda::runtime {

struct process_paths {
  int process_index = 0;
  std::vector<protocol::route> routes;  // per process; local for this one
  std::vector<std::string> gpu_names;   // per process: "GPU <bus id>"
  std::vector<int> nodes;               // per process
  std::vector<std::uint8_t> peers;      // [process][process]: both chose the peer path
  // A `dcuda: warning:` line where this process is the first of several on one GPU of its node
  // (bootstrap::shared_gpu_warning); empty otherwise.
  std::string shared_gpu_warning;
  // Where the collectives among the processes run: dcuda's duplicate of MPI_COMM_WORLD (owned by
  // the set-up's process_placement); MPI_COMM_NULL for a process alone.
  MPI_Comm world = MPI_COMM_NULL;
  // Whether this process's GPU has native atomics in the memory of every GPU it may reach by the
  // peer path (NVLink has them; peer access over PCIe may not): a peer notification is then
  // counted with a reduction in the target's ring memory, otherwise always a ring record.
  bool peer_atomics = true;

  int process_count() const { return static_cast<int>(routes.size()); }
  protocol::route route_to(int process) const { return routes[static_cast<std::size_t>(process)]; }
  // Whether processes a and b reach each other by the peer path (both chose it).
  bool reach_as_peers(int a, int b) const;
  // Whether every process of the job reaches every other by the peer path (one node, peer stores
  // everywhere): then barriers of DCUDA_COMM_WORLD can meet on the GPUs (protocol/node_barrier.h).
  // The same answer in every process.
  bool all_peers() const;
  // Whether this process reaches some other by the peer path.
  bool any_peer() const;
};

// The paths of a process that runs alone, without MPI: itself, locally.
process_paths lone_process_paths();

// Collective over `world` (dcuda's duplicate of MPI_COMM_WORLD): tells every process which GPU
// this one runs (`device`) and
// decides the path to every other process: peer when both GPUs are on one node and can reach
// each other's memory, unless either process forces the network. Also finds the processes that
// share this process's GPU (shared_gpu_warning).
process_paths decide_paths(const bootstrap::process_layout& layout, MPI_Comm world, int device,
                           bool force_network);

// One line per other process: its node, its GPU, its ranks and the path to it.
std::string describe_paths(const bootstrap::process_layout& layout, const process_paths& paths,
                           const bootstrap::rank_layout& ranks);

}  // namespace dcuda::runtime
