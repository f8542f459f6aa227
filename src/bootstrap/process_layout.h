// Where a dcuda process stands among the others (thesis listing 3.3, dcuda_rank_info): which
// node, which process of the node (which picks its GPU), and which world ranks it owns.
#pragma once

#include <mpi.h>

#include <vector>

namespace dcuda::bootstrap {

struct process_layout {
  int process_count = 1;
  int process_index = 0;
  int node_count = 1;
  int node_index = 0;   // nodes numbered by their lowest process index
  int local_count = 1;  // processes on this node
  int local_index = 0;  // this process among them: the GPU it takes unless DCUDA_DEVICE says
};

// Collective over `world`.
process_layout discover_layout(MPI_Comm world);

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
