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
#include "protocol/routes.h"
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

  // Collective: every process says how many ranks it runs; world ranks follow process order.
  void share_rank_counts(int device_ranks);

  // Collective, after share_rank_counts. Tells every process what this one runs (its GPU
  // `device` and its notification counters) and decides the path to every other process: peer
  // when both GPUs are on one node and can reach each other's memory, unless either process
  // forces the network.
  void connect(int device, std::uint32_t* notification_counters, bool force_network);

  // Collective (dcuda_host_share_memory): every process names one device allocation (any pointer
  // into it) or none; each maps those of the processes it reaches by the peer path, now, before
  // any kernel runs. Window creation then finds them mapped (shared_mapping).
  void share_memory(const void* allocation);
  // Where the allocation that `process` shared, based at `exporter_base` in its address space,
  // is mapped in this one; null when it was not shared.
  char* shared_mapping(int process, std::uint64_t exporter_base) const;

  const bootstrap::rank_layout& ranks() const { return ranks_; }
  protocol::route route_to_process(int process) const {
    return routes_[static_cast<std::size_t>(process)];
  }
  // One entry per world rank (protocol/routes.h), for the device.
  std::vector<protocol::rank_route> rank_routes() const;
  // One line per other process: its node, its GPU, its ranks and the path to it.
  std::string describe_paths() const;

 private:
  bootstrap::process_layout layout_;
  bootstrap::rank_layout ranks_;
  std::vector<protocol::route> routes_;   // per process
  std::vector<std::uint32_t*> counters_;  // per process, in this GPU's address space (or null)
  std::vector<std::string> gpu_names_;    // per process: "GPU <bus id>"
  std::vector<int> nodes_;                // per process
  peer_mappings mapped_counters_;
  peer_mappings mapped_shared_;
  std::map<std::pair<int, std::uint64_t>, char*> shared_;  // (process, its base) -> mapped base
};

}  // namespace dcuda::runtime
