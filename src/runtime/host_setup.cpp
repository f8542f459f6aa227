#include "runtime/host_setup.h"

#include <cstdlib>
#include <string>

#include "bootstrap/mpi_session.h"
#include "runtime/diagnostics.h"
#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

// Variables that MPI launchers set in the processes they start.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                           "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// MPI stays initialised for the life of the process: a program may create several dcuda
// contexts one after the other, and MPI cannot be initialised twice.
bootstrap::mpi_session& shared_mpi_session() {
  static bootstrap::mpi_session session(nullptr, nullptr);
  return session;
}

// The GPU of this process (bootstrap::choose_gpu): the one the settings name, else its index
// among the processes of its node modulo the GPUs it sees.
int select_device(const std::optional<int>& chosen,
                  const std::optional<bootstrap::process_layout>& job, bool verbose) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorNoDevice) {
    cudaGetLastError();  // no GPU is an answer here: choose_gpu says so
    count = 0;
  } else if (status != cudaSuccess) {
    throw_cuda_error(status, "cudaGetDeviceCount(&count)");
  }
  const int local_index = job ? job->host_index : 0;  // emulated nodes share the host's GPUs
  const bootstrap::gpu_choice choice = bootstrap::choose_gpu(local_index, count, chosen);
  DCUDA_CUDA_CHECK(cudaSetDevice(choice.device));
  if (verbose) info("takes GPU " + std::to_string(choice.device) + " (" + choice.reason + ")");
  return choice.device;
}

// Resident blocks to keep back from the ranks for the delivery agent, which the kernel runs
// beside them when some rank is reached through the network (device/delivery_agent.cuh). On a
// node of NVLink peers no block would run there (one SM of the GPU idle).
int blocks_for_delivery_agent(const process_paths& paths) {
  return paths.process_count() > 1 && !paths.all_peers() ? 1 : 0;
}

}  // namespace

bool join_if_launched() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised && !started_by_mpi_launcher()) return false;
  shared_mpi_session();
  return true;
}

process_placement place_process(const std::optional<int>& chosen_device, bool verbose,
                                int emulated_nodes) {
  process_placement placement;
  if (join_if_launched()) {
    placement.world = bootstrap::mpi_communicator(MPI_COMM_WORLD);
    placement.job = bootstrap::discover_layout(placement.world.get(), emulated_nodes);
  }
  placement.device = select_device(chosen_device, placement.job, verbose);
  return placement;
}

process_paths decide_paths(const process_placement& placement, bool force_network) {
  if (!placement.job) return lone_process_paths();
  return decide_paths(*placement.job, placement.world.get(), placement.device, force_network);
}

rank_counts count_ranks(const process_placement& placement, const process_paths& paths,
                        dcuda_kernel_t kernel, int threads_per_rank, std::optional<int> max_ranks) {
  rank_counts counts;
  counts.launch = plan_launch(kernel, placement.device, threads_per_rank, max_ranks,
                              blocks_for_delivery_agent(paths));
  const int device_ranks = counts.launch.ranks;
  if (!placement.job) {
    counts.ranks.rank_starts = {0, device_ranks};
    counts.shape = {device_ranks, device_ranks, 0, 1, 0};
    return counts;
  }
  counts.ranks = bootstrap::exchange_rank_counts(paths.world, device_ranks);
  const int me = placement.job->process_index;
  counts.shape = {device_ranks, counts.ranks.world_size(), counts.ranks.rank_start(me),
                  placement.job->process_count, me};
  return counts;
}

std::vector<protocol::rank_route> route_ranks(const process_paths& paths, const rank_counts& counts,
                                              const peer_rings& rings) {
  const bootstrap::rank_layout& ranks = counts.ranks;
  const ring_geometry geometry(paths, ranks);
  std::vector<protocol::rank_route> routes(static_cast<std::size_t>(ranks.world_size()));
  const int me = paths.process_index;
  for (int p = 0; p < paths.process_count(); ++p) {
    char* memory = rings.mapped(p);
    for (int r = 0; r < ranks.ranks_of(p); ++r) {
      protocol::rank_route& route = routes[static_cast<std::size_t>(ranks.rank_start(p) + r)];
      route.path = static_cast<std::uint32_t>(paths.route_to(p));
      if (memory != nullptr) {
        route.ring = memory + geometry.layout(p).ring(static_cast<std::uint32_t>(r),
                                                      geometry.ring_peer_index(p, me));
        route.slot = geometry.slot_base(me, p) + static_cast<std::uint32_t>(r);
      }
    }
  }
  return routes;
}

}  // namespace dcuda::runtime
