// Bootstrap: where each process stands, and which world ranks it owns.
#include <cstring>
#include <optional>
#include <string>

#include "bootstrap/mpi_cuda_support.h"
#include "bootstrap/mpi_session.h"
#include "bootstrap/process_layout.h"
#include "mpi_test_main.h"
#include "runtime/error.h"
#include "runtime/settings.h"
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

using namespace dcuda::bootstrap;

namespace {

// DCUDA_EMULATE_NODES of this run (CTest runs these tests with 1 and with 2).
int emulated_nodes() {
  return dcuda::runtime::read_settings({}, dcuda::runtime::dcuda_environment()).emulate_nodes;
}

// On one machine: `nodes` nodes of contiguous blocks of processes.
void check_one_host_as(const process_layout& layout, int nodes) {
  const int me = mpi_test::process_index(), count = mpi_test::process_count();
  DCUDA_CHECK_EQ(layout.process_count, count);
  DCUDA_CHECK_EQ(layout.process_index, me);
  DCUDA_CHECK_EQ(layout.host_count, count);
  DCUDA_CHECK_EQ(layout.host_index, me);
  DCUDA_CHECK_EQ(layout.node_count, nodes);
  DCUDA_CHECK_EQ(layout.node_index, me * nodes / count);
  int first = 0, members = 0;  // of this process's node
  for (int p = count - 1; p >= 0; --p) {
    if (p * nodes / count != layout.node_index) continue;
    first = p;
    ++members;
  }
  DCUDA_CHECK_EQ(layout.local_count, members);
  DCUDA_CHECK_EQ(layout.local_index, me - first);
}

}  // namespace

DCUDA_TEST(layout_numbers_processes_and_nodes) {
  // mpirun on one machine: one node holding every process, or the emulated ones.
  check_one_host_as(discover_layout(MPI_COMM_WORLD, emulated_nodes()), emulated_nodes());
}

DCUDA_TEST(emulated_nodes_split_the_host_and_the_node_fields_follow) {
  // 4 processes, 2 nodes: processes 0 and 1 are node 0 (local 0 and 1), 2 and 3 node 1.
  check_one_host_as(discover_layout(MPI_COMM_WORLD, 2), 2);
  check_one_host_as(discover_layout(MPI_COMM_WORLD, mpi_test::process_count()),
                    mpi_test::process_count());
  // More nodes than processes on the host: a setting error on every process, named.
  try {
    discover_layout(MPI_COMM_WORLD, mpi_test::process_count() + 1);
    throw dcuda_test::failure("more emulated nodes than processes were accepted");
  } catch (const dcuda::runtime::error& e) {
    DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_SETTING);
    DCUDA_CHECK(std::string(e.what()).find("DCUDA_EMULATE_NODES=" +
                                           std::to_string(mpi_test::process_count() + 1)) !=
                std::string::npos);
  }
}

DCUDA_TEST(node_local_position_matches_a_shared_memory_split) {
  const process_layout layout = discover_layout(MPI_COMM_WORLD, emulated_nodes());
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int split_index = -1;
  int split_count = -1;
  MPI_Comm_rank(node, &split_index);
  MPI_Comm_size(node, &split_count);
  MPI_Comm_free(&node);
  DCUDA_CHECK_EQ(layout.host_index, split_index);
  DCUDA_CHECK_EQ(layout.host_count, split_count);
  // The launcher (Open MPI's mpirun, MPICH's Hydra, srun) says the same, so nothing is warned.
  const std::optional<launcher_position> launcher = read_launcher_position(launcher_environment());
  DCUDA_CHECK(launcher.has_value());
  DCUDA_CHECK_EQ(launcher->index, split_index);
  if (launcher->count) DCUDA_CHECK_EQ(*launcher->count, split_count);
  DCUDA_CHECK(
      launcher_disagreement(layout.process_index, layout.host_index, layout.host_count, launcher)
          .empty());
  // Every process of the host takes a GPU of its own where there are as many (and GPU 0 where
  // each sees one), emulated nodes or not.
  DCUDA_CHECK_EQ(choose_gpu(layout.host_index, layout.host_count, std::nullopt).device,
                 layout.host_index);
  DCUDA_CHECK_EQ(choose_gpu(layout.host_index, 1, std::nullopt).device, 0);
}

DCUDA_TEST(rank_counts_may_differ_between_processes) {
  // Process p runs 3 + p ranks, except process 1, which runs none.
  const int me = mpi_test::process_index();
  const int mine = me == 1 ? 0 : 3 + me;
  const rank_layout ranks = exchange_rank_counts(MPI_COMM_WORLD, mine);
  int expected_start = 0;
  for (int p = 0; p < mpi_test::process_count(); ++p) {
    const int count = p == 1 ? 0 : 3 + p;
    DCUDA_CHECK_EQ(ranks.rank_start(p), expected_start);
    DCUDA_CHECK_EQ(ranks.ranks_of(p), count);
    for (int r = expected_start; r < expected_start + count; ++r) {
      DCUDA_CHECK_EQ(ranks.process_of(r), p);
    }
    expected_start += count;
  }
  DCUDA_CHECK_EQ(ranks.world_size(), expected_start);
}

DCUDA_TEST(mpi_cuda_support_is_asked_and_reported) {
  const mpi_cuda_support support = query_mpi_cuda_support();
  const std::string line = describe(support);
  DCUDA_CHECK(line.find("dcuda: MPI takes device buffers: ") == 0);
  DCUDA_CHECK(line.find("pinned host memory") != std::string::npos);
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // Open MPI: the query exists and the report carries its answer.
  DCUDA_CHECK(support.queried);
  DCUDA_CHECK_EQ(support.at_run_time, MPIX_Query_cuda_support() != 0);
  DCUDA_CHECK(line.find(support.at_run_time
                            ? "yes (MPIX_Query_cuda_support() = 1"
                            : "no (MPIX_Query_cuda_support() = 0") != std::string::npos);
#else
  DCUDA_CHECK(!support.queried);
  DCUDA_CHECK(line.find("unknown") != std::string::npos);
#endif
  // The image's and CI's Open MPI are not CUDA-aware; a CUDA-aware build
  // answers yes above, which is why this case checks consistency, not a fixed answer.
}

// dcuda initialised MPI here (main.cpp): MPI_COMM_WORLD and the communicators dcuda makes return
// errors, and the check turns them into DCUDA_ERROR_MPI with MPI's own text.
DCUDA_TEST(mpi_failure_becomes_an_mpi_error) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  DCUDA_CHECK_EQ(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler), MPI_SUCCESS);
  DCUDA_CHECK(handler == MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
  int processes = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  int value = 0;
  try {
    DCUDA_MPI_CHECK(MPI_Send(&value, 1, MPI_INT, processes + 5, 0, MPI_COMM_WORLD));
    throw dcuda_test::failure("MPI_Send to a rank that does not exist succeeded");
  } catch (const dcuda::runtime::error& e) {
    DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_MPI);
    const std::string text = e.what();
    DCUDA_CHECK(
        text.rfind("MPI_Send(&value, 1, MPI_INT, processes + 5, 0, MPI_COMM_WORLD) failed: ", 0) ==
        0);
    DCUDA_CHECK(text.size() > std::strlen("MPI_Send(...) failed: "));  // MPI's own text follows
  }
}
