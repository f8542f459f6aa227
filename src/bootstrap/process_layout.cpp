#include "bootstrap/process_layout.h"

#include <algorithm>

#include "bootstrap/mpi_session.h"

namespace dcuda::bootstrap {

process_layout discover_layout(MPI_Comm world) {
  process_layout layout;
  DCUDA_MPI_CHECK(MPI_Comm_size(world, &layout.process_count));
  DCUDA_MPI_CHECK(MPI_Comm_rank(world, &layout.process_index));

  // Processes that share memory are on one node.
  MPI_Comm node = MPI_COMM_NULL;
  DCUDA_MPI_CHECK(
      MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, layout.process_index, MPI_INFO_NULL, &node));
  DCUDA_MPI_CHECK(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN));
  DCUDA_MPI_CHECK(MPI_Comm_size(node, &layout.local_count));
  DCUDA_MPI_CHECK(MPI_Comm_rank(node, &layout.local_index));

  // The first process of each node numbers the nodes among themselves and tells its node.
  MPI_Comm leaders = MPI_COMM_NULL;
  DCUDA_MPI_CHECK(MPI_Comm_split(world, layout.local_index == 0 ? 0 : MPI_UNDEFINED,
                                 layout.process_index, &leaders));
  int numbering[2] = {0, 0};  // node index, node count
  if (leaders != MPI_COMM_NULL) {
    DCUDA_MPI_CHECK(MPI_Comm_set_errhandler(leaders, MPI_ERRORS_RETURN));
    DCUDA_MPI_CHECK(MPI_Comm_rank(leaders, &numbering[0]));
    DCUDA_MPI_CHECK(MPI_Comm_size(leaders, &numbering[1]));
    DCUDA_MPI_CHECK(MPI_Comm_free(&leaders));
  }
  DCUDA_MPI_CHECK(MPI_Bcast(numbering, 2, MPI_INT, 0, node));
  DCUDA_MPI_CHECK(MPI_Comm_free(&node));
  layout.node_index = numbering[0];
  layout.node_count = numbering[1];
  return layout;
}

rank_layout exchange_rank_counts(MPI_Comm world, int my_ranks) {
  int processes = 0;
  DCUDA_MPI_CHECK(MPI_Comm_size(world, &processes));
  std::vector<int> counts(static_cast<std::size_t>(processes));
  DCUDA_MPI_CHECK(MPI_Allgather(&my_ranks, 1, MPI_INT, counts.data(), 1, MPI_INT, world));
  rank_layout layout;
  layout.rank_starts.resize(counts.size() + 1, 0);
  for (std::size_t p = 0; p < counts.size(); ++p) {
    layout.rank_starts[p + 1] = layout.rank_starts[p] + counts[p];
  }
  return layout;
}

int rank_layout::process_of(int world_rank) const {
  // The last start that is <= world_rank; processes with zero ranks are skipped over.
  const auto after = std::upper_bound(rank_starts.begin(), rank_starts.end() - 1, world_rank);
  return static_cast<int>(after - rank_starts.begin()) - 1;
}

}  // namespace dcuda::bootstrap
