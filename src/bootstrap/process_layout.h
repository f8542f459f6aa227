// Where a dcuda process stands among the others (thesis listing 3.3, dcuda_rank_info): which
// node, which process of the node, which GPU it takes, and which world ranks it owns.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dcuda::bootstrap {

struct process_layout {
  int process_count = 1;
  int process_index = 0;
  int node_count = 1;
  int node_index = 0;   // nodes numbered by their lowest process index
  int local_count = 1;  // processes on this node
  int local_index = 0;  // this process among them (in process order)
  // The same on the host (the processes that share memory): they differ from the node's only
  // where emulated nodes split a host. The host-local index picks the GPU (choose_gpu).
  int host_count = 1;
  int host_index = 0;
};

// Collective over `world`. The processes of a node are those of an MPI shared-memory split
// (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED): exactly the processes the peer path can join.
// Where the launcher's own node-local variables disagree with it (read_launcher_position), a
// `dcuda: warning:` on standard error says so; the split is followed.
// `emulated_nodes` > 1 (DCUDA_EMULATE_NODES) splits the processes of each host further into that
// many nodes (emulated_node_of), so that one host can stand for several nodes: processes on
// different emulated nodes reach each other only through the network path. Throws
// runtime::error (DCUDA_ERROR_SETTING) where a host has fewer processes than emulated nodes.
process_layout discover_layout(MPI_Comm world, int emulated_nodes = 1);

// The emulated node (0..nodes-1) of the process at host-local index `host_index` of
// `host_count`: contiguous blocks in process order, index * nodes / count, so that with 4
// processes and 2 nodes processes 0 and 1 form node 0 and 2 and 3 node 1, each taking GPUs of
// its own (by host-local index). Every node gets at least one process where nodes <= count.
int emulated_node_of(int host_index, int host_count, int nodes);

using environment_list = std::vector<std::pair<std::string, std::string>>;

// The node-local position a launcher gives a process in its environment.
struct launcher_position {
  std::string index_variable;  // e.g. "OMPI_COMM_WORLD_LOCAL_RANK"
  int index = 0;
  std::string count_variable;  // empty where the launcher does not say
  std::optional<int> count;
};

// Reads the node-local index (and count, where the launcher gives one) from the first of these
// launchers' variables that is set and well-formed: Open MPI (OMPI_COMM_WORLD_LOCAL_RANK/_SIZE),
// MPICH's Hydra (MPI_LOCALRANKID, MPI_LOCALNRANKS), MVAPICH2 (MV2_COMM_WORLD_LOCAL_RANK/_SIZE),
// Cray PALS (PALS_LOCAL_RANKID), PMI (PMI_LOCAL_RANK, PMI_LOCAL_SIZE), Slurm (SLURM_LOCALID).
// The MPI's own launcher comes first and Slurm last: `srun -n 1 mpirun ...` leaves the one
// task's SLURM_LOCALID=0 in every process that mpirun starts. A value that is not an integer >= 0,
// or an index not below its count, is passed over. None: nullopt.
std::optional<launcher_position> read_launcher_position(const environment_list& environment);

// The launchers' variables among this process's environment variables.
environment_list launcher_environment();

// A `dcuda: warning: ...` line (with its newline) where the launcher's position disagrees with
// the shared-memory split's (index `split_index` of `split_count`); empty where they agree or
// the launcher says nothing.
std::string launcher_disagreement(int process_index, int split_index, int split_count,
                                  const std::optional<launcher_position>& launcher);

// The GPU a process takes, among the GPUs visible to it (CUDA numbering), and why.
struct gpu_choice {
  int device = 0;
  std::string reason;  // "DCUDA_DEVICE=1", "node-local index 5 mod 4 visible GPUs", ...
};

// `setting` (DCUDA_DEVICE / --dcuda-device) where given, else the node-local index modulo the
// visible GPUs: with one process per GPU of the node that is the process's own GPU, and where
// each process sees only its own (srun --gpus-per-task=1, a CUDA_VISIBLE_DEVICES per process)
// it is that one. Throws runtime::error when no GPU is visible, or when `setting` names one that
// is not.
gpu_choice choose_gpu(int local_index, int visible_gpus, std::optional<int> setting);

// One process's GPU, as all processes exchange it: the node, a physical GPU identity (UUID, so
// that two processes whose CUDA_VISIBLE_DEVICES number one GPU differently still match) and a
// name for messages (its PCI bus id).
struct gpu_owner {
  int node = 0;
  std::string gpu_id;
  std::string gpu_name;
};

// A `dcuda: warning: ...` line (with its newline) naming the processes that share this process's
// GPU, printed by the lowest of them only (so once per shared GPU); empty otherwise.
std::string shared_gpu_warning(const std::vector<gpu_owner>& owners, int me);

// World ranks: process p owns [rank_starts[p], rank_starts[p + 1]).
struct rank_layout {
  std::vector<int> rank_starts;  // process_count + 1 entries; the last is the world size

  int world_size() const { return rank_starts.back(); }
  int rank_start(int process) const { return rank_starts[static_cast<std::size_t>(process)]; }
  int ranks_of(int process) const { return rank_start(process + 1) - rank_start(process); }
  // The process that owns `world_rank` (which must be in 0..world_size-1).
  int process_of(int world_rank) const;
};

// Collective over `world`: every process says how many ranks it runs (they may differ).
rank_layout exchange_rank_counts(MPI_Comm world, int my_ranks);

}  // namespace dcuda::bootstrap
