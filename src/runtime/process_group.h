// The processes of a dcuda job (one per GPU) and how each reaches the others (issue 3,
// docs/design.md "Across GPUs and nodes"). MPI is the bootstrap: dcuda joins the job when the
// program was started by an MPI launcher (mpirun, srun) or has initialised MPI itself; otherwise
// it runs alone, without MPI.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/mpi_session.h"
#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/peer_ring.h"
#include "dcuda/detail/protocol/routes.h"
#include "runtime/peer_memory.h"

namespace dcuda::runtime {

class process_group {
 public:
  // The group, or nullptr when the program runs as a single process outside an MPI job.
  static std::unique_ptr<process_group> join_if_launched();

  explicit process_group(bootstrap::process_layout layout) : layout_(layout) {}
  process_group(const process_group&) = delete;
  process_group& operator=(const process_group&) = delete;

  const bootstrap::process_layout& layout() const { return layout_; }
  MPI_Comm world() const { return MPI_COMM_WORLD; }

  // Collective, first: tells every process which GPU this one runs (`device`) and decides the
  // path to every other process: peer when both GPUs are on one node and can reach each other's
  // memory, unless either process forces the network. Before the rank counts, because whether
  // any path is the network decides them (a delivery agent's block, runtime/launch_config.h).
  void decide_paths(int device, bool force_network);

  // Collective, after decide_paths: every process says how many ranks it runs; world ranks
  // follow process order.
  void share_rank_counts(int device_ranks);

  // Collective (dcuda_host_share_memory): every process names one device allocation (any pointer
  // into it) or none; each maps those of the processes it reaches by the peer path, now, before
  // any kernel runs. Window creation then finds them mapped (shared_mapping).
  void share_memory(const void* allocation);
  // Where the allocation that `process` shared, based at `exporter_base` in its address space,
  // is mapped in this one; null when it was not shared.
  char* shared_mapping(int process, std::uint64_t exporter_base) const;

  // After share_rank_counts: how this process's ring memory is laid out (protocol/peer_ring.h); no
  // rings (peer_gpus 0) without other processes on the node.
  protocol::ring_memory_layout ring_layout() const { return ring_layout(layout_.process_index); }
  // Collective, after share_rank_counts: exports this process's ring memory (null: none) and maps
  // that of the processes reached by the peer path.
  void share_rings(char* ring_memory);
  // After share_rings: per ring of this process's ranks (per other process of the node, in
  // process order), where its rank 0 publishes how far it has taken it (null: not reached).
  std::vector<std::uint32_t*> ring_taken() const;
  // After decide_paths: whether every process of the job reaches every other by the peer path (one
  // node, peer stores everywhere): then barriers of DCUDA_COMM_WORLD can meet on the GPUs
  // (protocol/node_barrier.h). The same answer in every process.
  bool all_peers() const;
  // Collective: whether any process says yes (the processes must agree on a mode that one of them
  // may have been given alone, e.g. by an argument).
  bool any_process(bool mine) const;
  // After share_rings, where all_peers: per ring of this process (per other process, in process
  // order), where its leader writes its word in that process's board.
  std::vector<std::uint64_t*> board_out() const;

  // After decide_paths: a `dcuda: warning:` line where this process is the first of several on
  // one GPU of its node (bootstrap::shared_gpu_warning); empty otherwise.
  const std::string& shared_gpu_warning() const { return shared_gpu_warning_; }

  const bootstrap::rank_layout& ranks() const { return ranks_; }
  protocol::route route_to_process(int process) const {
    return routes_[static_cast<std::size_t>(process)];
  }
  // One entry per world rank (protocol/routes.h), for the device; this GPU's ranks count their
  // notifications in `own_counters` (tag_count per rank).
  std::vector<protocol::rank_route> rank_routes(std::uint32_t* own_counters) const;
  // One line per other process: its node, its GPU, its ranks and the path to it.
  std::string describe_paths() const;

 private:
  bootstrap::process_layout layout_;
  bootstrap::rank_layout ranks_;
  std::vector<protocol::route> routes_;  // per process
  std::vector<char*> ring_memory_;       // per process, in this GPU's address space (or null)
  std::vector<std::string> gpu_names_;   // per process: "GPU <bus id>"
  std::vector<int> nodes_;               // per process
  std::string shared_gpu_warning_;
  std::vector<std::uint8_t> peers_;  // [process][process]: both chose the peer path
  peer_mappings mapped_rings_;

  // What exchange_exports returns for one process: the allocation it offered, mapped into this
  // process (null: it offered none, or it is not reached by the peer path), the allocation's base
  // in the offering process, and the offered pointer's offset in it.
  struct mapped_export {
    char* mapped_base = nullptr;
    std::uint64_t exporter_base = 0;
    std::uint64_t offset = 0;
  };
  // Collective: every process offers the device allocation around `pointer` (null: none); each
  // maps, through `mappings`, those of the processes it reaches by the peer path.
  std::vector<mapped_export> exchange_exports(const void* pointer, peer_mappings& mappings) const;
  // Whether processes a and b reach each other by the peer path (both chose it).
  bool peers(int a, int b) const;
  // Which ring of `owner`'s ranks takes `sender`'s records; where `target`'s ranks start in
  // `owner`'s slots (its tails and taken); the layout of `process`'s ring memory.
  std::uint32_t ring_peer_index(int owner, int sender) const;
  std::uint32_t slot_base(int owner, int target) const;
  protocol::ring_memory_layout ring_layout(int process) const;
  // Where `process`'s ring memory is mapped in this process (null: not mapped, or itself).
  char* mapped_rings(int process) const;
  peer_mappings mapped_shared_;
  std::map<std::pair<int, std::uint64_t>, char*> shared_;  // (process, its base) -> mapped base
};

}  // namespace dcuda::runtime
