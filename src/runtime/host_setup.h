// dcuda_host_init's set-up, in phases (docs/design.md "Host runtime"): each phase takes what the
// earlier ones returned, so their order is the order of the data. The collective phases (over
// dcuda's duplicate of MPI_COMM_WORLD, in a job of several processes) run in the same order in
// every process.
//
//   place_process   -> process_placement  the job (if any) and this process's GPU
//   decide_paths    -> process_paths      the path to every process, who shares this GPU
//                                         (collective)
//   count_ranks     -> rank_counts        ranks per GPU (occupancy), then world ranks (collective)
//   peer_rings      (runtime/peer_rings.h) rings with the peers, where barriers meet (collective)
//   route_ranks     -> rank routes        the path, ring and slot of every world rank
//
// The device buffers (runtime/device_buffers.h) are then sized by the rank counts and given the
// rings and the routes.
#pragma once

#include <optional>
#include <vector>

#include "bootstrap/mpi_session.h"
#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/routes.h"
#include "dcuda/host.h"
#include "runtime/device_buffers.h"
#include "runtime/launch_config.h"
#include "runtime/peer_rings.h"
#include "runtime/process_paths.h"

namespace dcuda::runtime {

struct process_placement {
  // Where this process stands in its MPI job; nullopt when it runs alone, outside any job (then
  // dcuda never calls MPI).
  std::optional<bootstrap::process_layout> job;
  // In a job: dcuda's duplicate of MPI_COMM_WORLD, on which every set-up collective runs.
  bootstrap::mpi_communicator world;
  int device = 0;  // the GPU it drives, selected for this thread

  bootstrap::process_layout layout() const { return job.value_or(bootstrap::process_layout{}); }
};

// Whether this process is part of an MPI job: true when the program initialised MPI itself or was
// started by an MPI launcher (then MPI is initialised here, once per process); false for a
// process started alone, which then never calls MPI.
bool join_if_launched();

// Joins the MPI job when the program was started by an MPI launcher or has initialised MPI
// itself (collective then), and selects the GPU (bootstrap::choose_gpu): the one the settings
// name (`chosen_device`), else its index among the processes of its node modulo the GPUs it
// sees; `verbose` says which and why. `emulated_nodes` (DCUDA_EMULATE_NODES) splits each host
// into that many nodes (bootstrap::discover_layout).
process_placement place_process(const std::optional<int>& chosen_device, bool verbose,
                                int emulated_nodes = 1);

// Collective in a job: the path to every process (runtime/process_paths.h); alone, only itself.
process_paths decide_paths(const process_placement& placement, bool force_network);

struct rank_counts {
  launch_config launch;          // this GPU's ranks (launch.ranks) and what limits them
  bootstrap::rank_layout ranks;  // world ranks of every process, in process order
  world_shape shape;             // where this GPU's ranks stand among them
};

// How many ranks this GPU runs (runtime/launch_config.h), then, collective in a job, how many
// every process runs. After the paths: a block is kept back for the delivery agent unless every
// process reaches every other by the peer path, an answer every process shares, so that every
// GPU of a uniform node runs as many ranks.
rank_counts count_ranks(const process_placement& placement, const process_paths& paths,
                        dcuda_kernel_t kernel, int threads_per_rank, std::optional<int> max_ranks);

// One entry per world rank (protocol/routes.h): the path to its process and, for a peer, its ring
// and slot. Counters stay null: the device buffers fill in those of this GPU's ranks.
std::vector<protocol::rank_route> route_ranks(const process_paths& paths, const rank_counts& counts,
                                              const peer_rings& rings);

}  // namespace dcuda::runtime
