#include "bootstrap/process_layout.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "bootstrap/mpi_session.h"
#include "runtime/error.h"

extern char** environ;

namespace dcuda::bootstrap {
namespace {

struct launcher_variables {
  const char* index;
  const char* count;  // null: the launcher gives no count
};

// In order of preference (read_launcher_position says why).
constexpr launcher_variables known_launchers[] = {
    {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"},
    {"PALS_LOCAL_RANKID", nullptr},
    {"PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"},
    {"SLURM_LOCALID", nullptr},
};

std::optional<std::string> value_of(const environment_list& environment, std::string_view name) {
  std::optional<std::string> found;
  for (const auto& [key, value] : environment) {
    if (key == name) found = value;
  }
  return found;
}

std::optional<int> non_negative_integer(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text->c_str(), &end, 10);
  if (end != text->c_str() + text->size() || errno != 0 || value < 0 || value > INT_MAX) {
    return std::nullopt;
  }
  return static_cast<int>(value);
}

std::string list_of_processes(const std::vector<int>& processes) {
  std::string text;
  for (std::size_t i = 0; i < processes.size(); ++i) {
    if (i > 0) text += i + 1 == processes.size() ? " and " : ", ";
    text += std::to_string(processes[i]);
  }
  return text;
}

}  // namespace

int emulated_node_of(int host_index, int host_count, int nodes) {
  return static_cast<int>(static_cast<long long>(host_index) * nodes / host_count);
}

process_layout discover_layout(MPI_Comm world, int emulated_nodes) {
  process_layout layout;
  DCUDA_MPI_CHECK(MPI_Comm_size(world, &layout.process_count));
  DCUDA_MPI_CHECK(MPI_Comm_rank(world, &layout.process_index));

  // Processes that share memory are on one host.
  MPI_Comm node = MPI_COMM_NULL;
  DCUDA_MPI_CHECK(
      MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, layout.process_index, MPI_INFO_NULL, &node));
  DCUDA_MPI_CHECK(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN));
  DCUDA_MPI_CHECK(MPI_Comm_size(node, &layout.host_count));
  DCUDA_MPI_CHECK(MPI_Comm_rank(node, &layout.host_index));
  // Emulated nodes: the host's processes in blocks. Checked alike on every process of the host,
  // so all of them fail together.
  if (emulated_nodes > 1) {
    if (emulated_nodes > layout.host_count) {
      MPI_Comm_free(&node);
      throw runtime::error(
          DCUDA_ERROR_SETTING,
          "dcuda_host_init: DCUDA_EMULATE_NODES=" + std::to_string(emulated_nodes) +
              " (--dcuda-emulate-nodes) asks for more nodes than the " +
              std::to_string(layout.host_count) + " process(es) of process " +
              std::to_string(layout.process_index) + "'s host");
    }
    MPI_Comm host = node;
    DCUDA_MPI_CHECK(
        MPI_Comm_split(host, emulated_node_of(layout.host_index, layout.host_count, emulated_nodes),
                       layout.host_index, &node));
    DCUDA_MPI_CHECK(MPI_Comm_free(&host));
    DCUDA_MPI_CHECK(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN));
  }
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

  const std::string disagreement =
      launcher_disagreement(layout.process_index, layout.host_index, layout.host_count,
                            read_launcher_position(launcher_environment()));
  if (!disagreement.empty()) {
    std::fwrite(disagreement.data(), 1, disagreement.size(), stderr);
    std::fflush(stderr);
  }
  return layout;
}

std::optional<launcher_position> read_launcher_position(const environment_list& environment) {
  for (const launcher_variables& launcher : known_launchers) {
    const std::optional<int> index = non_negative_integer(value_of(environment, launcher.index));
    if (!index) continue;
    launcher_position position;
    position.index_variable = launcher.index;
    position.index = *index;
    if (launcher.count != nullptr) {
      const std::optional<int> count = non_negative_integer(value_of(environment, launcher.count));
      if (count) {
        if (*index >= *count) continue;
        position.count_variable = launcher.count;
        position.count = count;
      }
    }
    return position;
  }
  return std::nullopt;
}

environment_list launcher_environment() {
  environment_list result;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const auto equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = text.substr(0, equals);
    const bool known = std::any_of(
        std::begin(known_launchers), std::end(known_launchers), [&](const launcher_variables& l) {
          return name == l.index || (l.count != nullptr && name == l.count);
        });
    if (known) result.emplace_back(name, text.substr(equals + 1));
  }
  return result;
}

std::string launcher_disagreement(int process_index, int split_index, int split_count,
                                  const std::optional<launcher_position>& launcher) {
  if (!launcher) return {};
  const bool index_differs = launcher->index != split_index;
  const bool count_differs = launcher->count && *launcher->count != split_count;
  if (!index_differs && !count_differs) return {};
  std::string says = launcher->index_variable + "=" + std::to_string(launcher->index);
  if (launcher->count)
    says += ", " + launcher->count_variable + "=" + std::to_string(*launcher->count);
  return "dcuda: warning: process " + std::to_string(process_index) +
         ": the launcher's node-local position (" + says +
         ") differs from MPI's, which finds this process at index " + std::to_string(split_index) +
         " of the " + std::to_string(split_count) +
         " process(es) that share its node; dcuda follows MPI (GPU choice, peer path). An MPI "
         "that does not match the launcher (e.g. srun starting an MPI built without Slurm's "
         "PMI) runs each process alone\n";
}

gpu_choice choose_gpu(int local_index, int visible_gpus, std::optional<int> setting) {
  if (visible_gpus <= 0) {
    throw runtime::error(
        DCUDA_ERROR_CUDA,
        "dcuda_host_init: this process sees no GPU (cudaGetDeviceCount found none); check "
        "CUDA_VISIBLE_DEVICES and the job's GPU request (srun --gpus-per-task, --gpus-per-node)");
  }
  if (setting) {
    if (*setting < 0 || *setting >= visible_gpus) {
      throw runtime::error(
          DCUDA_ERROR_SETTING,
          "dcuda_host_init: GPU " + std::to_string(*setting) +
              " (DCUDA_DEVICE / --dcuda-device) does not exist; this process sees " +
              std::to_string(visible_gpus) + " GPU(s), 0 to " + std::to_string(visible_gpus - 1));
    }
    return {*setting, "DCUDA_DEVICE=" + std::to_string(*setting)};
  }
  const int device = local_index % visible_gpus;
  return {device, "node-local index " + std::to_string(local_index) + " mod " +
                      std::to_string(visible_gpus) + " visible GPU(s)"};
}

std::string shared_gpu_warning(const std::vector<gpu_owner>& owners, int me) {
  const gpu_owner& mine = owners[static_cast<std::size_t>(me)];
  std::vector<int> sharing;
  for (std::size_t p = 0; p < owners.size(); ++p) {
    if (owners[p].node == mine.node && owners[p].gpu_id == mine.gpu_id) {
      sharing.push_back(static_cast<int>(p));
    }
  }
  if (sharing.size() < 2 || sharing.front() != me) return {};
  return "dcuda: warning: processes " + list_of_processes(sharing) + " of node " +
         std::to_string(mine.node) + " share GPU " + mine.gpu_name +
         ": their kernels take turns on it. Start one process per GPU (or give each its own with "
         "CUDA_VISIBLE_DEVICES or DCUDA_DEVICE); DCUDA_ALLOW_SHARED_GPUS=1 silences this where "
         "sharing is meant\n";
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
