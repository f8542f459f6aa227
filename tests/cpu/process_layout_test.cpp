// The node-local position from each launcher's variables, and the GPU a process takes from it.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/process_layout.h"
#include "runtime/error.h"
#include "runtime/settings.h"
#include "test_main.h"

using namespace dcuda::bootstrap;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The text of the runtime::error that choose_gpu throws; empty when it throws none.
std::string gpu_choice_error(int local_index, int visible_gpus, std::optional<int> setting) {
  try {
    choose_gpu(local_index, visible_gpus, setting);
  } catch (const dcuda::runtime::error& e) {
    return e.what();
  }
  return {};
}

}  // namespace

DCUDA_TEST(each_launcher_gives_the_node_local_position) {
  struct launcher {
    environment_list environment;
    const char* index_variable;
    int index;
    std::optional<int> count;
  };
  const launcher launchers[] = {
      {{{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}},
       "OMPI_COMM_WORLD_LOCAL_RANK",
       3,
       4},
      {{{"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}}, "MPI_LOCALRANKID", 1, 2},
      {{{"MV2_COMM_WORLD_LOCAL_RANK", "2"}, {"MV2_COMM_WORLD_LOCAL_SIZE", "8"}},
       "MV2_COMM_WORLD_LOCAL_RANK",
       2,
       8},
      {{{"PALS_LOCAL_RANKID", "5"}}, "PALS_LOCAL_RANKID", 5, std::nullopt},
      {{{"PMI_LOCAL_RANK", "0"}, {"PMI_LOCAL_SIZE", "3"}}, "PMI_LOCAL_RANK", 0, 3},
      {{{"SLURM_LOCALID", "7"}}, "SLURM_LOCALID", 7, std::nullopt},
  };
  for (const launcher& l : launchers) {
    const std::optional<launcher_position> position = read_launcher_position(l.environment);
    DCUDA_CHECK(position.has_value());
    DCUDA_CHECK_EQ(position->index_variable, std::string(l.index_variable));
    DCUDA_CHECK_EQ(position->index, l.index);
    DCUDA_CHECK(position->count == l.count);
  }
  DCUDA_CHECK(!read_launcher_position({}).has_value());
  DCUDA_CHECK(!read_launcher_position({{"OMPI_COMM_WORLD_SIZE", "4"}, {"PMI_RANK", "1"}}));
}

DCUDA_TEST(the_mpi_launcher_wins_over_slurm_and_bad_values_are_passed_over) {
  // `srun -n 1 mpirun -np 4 ...`: every process inherits the one task's SLURM_LOCALID=0.
  const auto inside_srun = read_launcher_position({{"SLURM_LOCALID", "0"},
                                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                                                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  DCUDA_CHECK(inside_srun.has_value());
  DCUDA_CHECK_EQ(inside_srun->index_variable, std::string("OMPI_COMM_WORLD_LOCAL_RANK"));
  DCUDA_CHECK_EQ(inside_srun->index, 2);
  // Hydra's variables before PMI's and Slurm's.
  const auto hydra = read_launcher_position(
      {{"PMI_LOCAL_RANK", "3"}, {"SLURM_LOCALID", "3"}, {"MPI_LOCALRANKID", "1"}});
  DCUDA_CHECK(hydra.has_value());
  DCUDA_CHECK_EQ(hydra->index_variable, std::string("MPI_LOCALRANKID"));
  DCUDA_CHECK(!hydra->count.has_value());
  // Not an integer >= 0, or an index not below its count: the next launcher's variable counts.
  for (const char* bad : {"", "one", "-1", "1.5", "99999999999"}) {
    const auto next =
        read_launcher_position({{"OMPI_COMM_WORLD_LOCAL_RANK", bad}, {"SLURM_LOCALID", "1"}});
    DCUDA_CHECK(next.has_value());
    DCUDA_CHECK_EQ(next->index_variable, std::string("SLURM_LOCALID"));
  }
  const auto beyond = read_launcher_position(
      {{"MPI_LOCALRANKID", "2"}, {"MPI_LOCALNRANKS", "2"}, {"PMI_LOCAL_RANK", "1"}});
  DCUDA_CHECK(beyond.has_value());
  DCUDA_CHECK_EQ(beyond->index_variable, std::string("PMI_LOCAL_RANK"));
  // A malformed count is left out; the index stands.
  const auto no_count = read_launcher_position(
      {{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "x"}});
  DCUDA_CHECK(no_count.has_value());
  DCUDA_CHECK_EQ(no_count->index, 1);
  DCUDA_CHECK(!no_count->count.has_value());
}

DCUDA_TEST(a_launcher_that_disagrees_with_mpi_is_named_and_mpi_followed) {
  const auto agrees = read_launcher_position(
      {{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  DCUDA_CHECK(launcher_disagreement(5, 1, 4, agrees).empty());
  DCUDA_CHECK(launcher_disagreement(5, 1, 4, std::nullopt).empty());
  // Slurm gives no count: the index alone is compared.
  DCUDA_CHECK(
      launcher_disagreement(2, 2, 3, read_launcher_position({{"SLURM_LOCALID", "2"}})).empty());
  // srun starting an MPI without Slurm's PMI: every process is alone in its own world.
  const std::string alone =
      launcher_disagreement(0, 0, 1, read_launcher_position({{"SLURM_LOCALID", "3"}}));
  DCUDA_CHECK(contains(alone, "dcuda: warning: process 0: "));
  DCUDA_CHECK(contains(alone, "SLURM_LOCALID=3"));
  DCUDA_CHECK(contains(alone, "index 0 of the 1 process(es)"));
  DCUDA_CHECK(contains(alone, "dcuda follows MPI"));
  DCUDA_CHECK_EQ(alone.back(), '\n');
  // The index agrees, the count does not.
  const std::string count = launcher_disagreement(1, 1, 2, agrees);
  DCUDA_CHECK(contains(count, "OMPI_COMM_WORLD_LOCAL_RANK=1, OMPI_COMM_WORLD_LOCAL_SIZE=4"));
  DCUDA_CHECK(contains(count, "index 1 of the 2 process(es)"));
}

DCUDA_TEST(gpu_is_the_node_local_index_modulo_the_visible_gpus) {
  // One process per GPU of a 4-GPU node.
  for (int index = 0; index < 4; ++index)
    DCUDA_CHECK_EQ(choose_gpu(index, 4, std::nullopt).device, index);
  // srun --gpus-per-task=1 (or a CUDA_VISIBLE_DEVICES per process): each sees its own GPU only.
  for (int index = 0; index < 4; ++index)
    DCUDA_CHECK_EQ(choose_gpu(index, 1, std::nullopt).device, 0);
  // More processes than GPUs: they share, in turn.
  DCUDA_CHECK_EQ(choose_gpu(5, 4, std::nullopt).device, 1);
  DCUDA_CHECK_EQ(choose_gpu(3, 2, std::nullopt).device, 1);
  const gpu_choice shared = choose_gpu(5, 4, std::nullopt);
  DCUDA_CHECK(contains(shared.reason, "node-local index 5 mod 4 visible GPU(s)"));
}

DCUDA_TEST(dcuda_device_is_honoured_and_checked) {
  const gpu_choice chosen = choose_gpu(3, 4, 1);
  DCUDA_CHECK_EQ(chosen.device, 1);
  DCUDA_CHECK_EQ(chosen.reason, std::string("DCUDA_DEVICE=1"));
  DCUDA_CHECK_EQ(choose_gpu(0, 1, 0).device, 0);
  const std::string beyond = gpu_choice_error(0, 2, 2);
  DCUDA_CHECK(
      contains(beyond, "dcuda_host_init: GPU 2 (DCUDA_DEVICE / --dcuda-device) does not exist"));
  DCUDA_CHECK(contains(beyond, "sees 2 GPU(s), 0 to 1"));
  DCUDA_CHECK(contains(gpu_choice_error(0, 1, 7), "GPU 7 (DCUDA_DEVICE"));
}

DCUDA_TEST(no_visible_gpu_is_a_clear_error) {
  for (const std::optional<int> setting : {std::optional<int>{}, std::optional<int>{0}}) {
    const std::string none = gpu_choice_error(0, 0, setting);
    DCUDA_CHECK(contains(none, "dcuda_host_init: this process sees no GPU"));
    DCUDA_CHECK(contains(none, "CUDA_VISIBLE_DEVICES"));
  }
}

DCUDA_TEST(processes_sharing_a_gpu_are_named_once) {
  // Node 0: processes 0 and 2 on GPU a, 1 on GPU b; node 1: processes 3, 4 and 5 on its GPU a
  // (the same model in the same slot, so the same bus id, but another GPU).
  const std::vector<gpu_owner> owners = {
      {0, "uuid-a", "0000:01:00.0"}, {0, "uuid-b", "0000:41:00.0"}, {0, "uuid-a", "0000:01:00.0"},
      {1, "uuid-c", "0000:01:00.0"}, {1, "uuid-c", "0000:01:00.0"}, {1, "uuid-c", "0000:01:00.0"}};
  const std::string first = shared_gpu_warning(owners, 0);
  DCUDA_CHECK(
      contains(first, "dcuda: warning: processes 0 and 2 of node 0 share GPU 0000:01:00.0"));
  DCUDA_CHECK(contains(first, "DCUDA_ALLOW_SHARED_GPUS=1"));
  DCUDA_CHECK_EQ(first.back(), '\n');
  DCUDA_CHECK(shared_gpu_warning(owners, 1).empty());  // alone on its GPU
  DCUDA_CHECK(shared_gpu_warning(owners, 2).empty());  // named by process 0
  DCUDA_CHECK(contains(shared_gpu_warning(owners, 3), "processes 3, 4 and 5 of node 1 share"));
  DCUDA_CHECK(shared_gpu_warning(owners, 4).empty());
  // One GPU seen under two CUDA numbers (different CUDA_VISIBLE_DEVICES) is still one GPU.
  DCUDA_CHECK(!shared_gpu_warning({{0, "uuid-a", "0000:01:00.0"}, {0, "uuid-a", "0000:01:00.0"}}, 0)
                   .empty());
  DCUDA_CHECK(shared_gpu_warning({{0, "uuid-a", "x"}, {0, "uuid-b", "y"}}, 0).empty());
}

DCUDA_TEST(emulated_nodes_split_a_host_into_contiguous_blocks) {
  // 4 processes, 2 nodes: 0 1 | 2 3.
  const int four_in_two[] = {0, 0, 1, 1};
  for (int i = 0; i < 4; ++i) DCUDA_CHECK_EQ(emulated_node_of(i, 4, 2), four_in_two[i]);
  // 5 processes, 2 nodes: 0 1 2 | 3 4 (the earlier node is never the larger by more than one).
  const int five_in_two[] = {0, 0, 0, 1, 1};
  for (int i = 0; i < 5; ++i) DCUDA_CHECK_EQ(emulated_node_of(i, 5, 2), five_in_two[i]);
  // Every count of nodes up to the count of processes: each node has a process, in order, and
  // the sizes differ by at most one.
  for (int count = 1; count <= 12; ++count) {
    for (int nodes = 1; nodes <= count; ++nodes) {
      std::vector<int> sizes(static_cast<std::size_t>(nodes), 0);
      int previous = 0;
      for (int i = 0; i < count; ++i) {
        const int node = emulated_node_of(i, count, nodes);
        DCUDA_CHECK(node >= previous && node < nodes);
        previous = node;
        ++sizes[static_cast<std::size_t>(node)];
      }
      const auto [least, most] = std::minmax_element(sizes.begin(), sizes.end());
      DCUDA_CHECK(*least >= 1);
      DCUDA_CHECK(*most - *least <= 1);
    }
  }
  // One node: every process on it.
  for (int i = 0; i < 7; ++i) DCUDA_CHECK_EQ(emulated_node_of(i, 7, 1), 0);
}

DCUDA_TEST(the_emulated_node_count_is_a_setting) {
  using dcuda::runtime::read_settings;
  DCUDA_CHECK_EQ(read_settings({}, {}).emulate_nodes, 1);
  DCUDA_CHECK_EQ(read_settings({}, {{"DCUDA_EMULATE_NODES", "2"}}).emulate_nodes, 2);
  DCUDA_CHECK_EQ(
      read_settings({"--dcuda-emulate-nodes=3"}, {{"DCUDA_EMULATE_NODES", "2"}}).emulate_nodes, 3);
  for (const char* bad : {"0", "-1", "two", ""}) {
    try {
      read_settings({}, {{"DCUDA_EMULATE_NODES", bad}});
      throw dcuda_test::failure(std::string("DCUDA_EMULATE_NODES=") + bad + " was accepted");
    } catch (const dcuda::runtime::error& e) {
      DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_SETTING);
      DCUDA_CHECK(std::string(e.what()).find("DCUDA_EMULATE_NODES") != std::string::npos);
    }
  }
  DCUDA_CHECK(
      dcuda::runtime::unknown_settings({"--dcuda-emulate-nodes=2"},
                                       {{"DCUDA_EMULATE_NODES", "2"}, {"DCUDA_SOAK_SECONDS", "60"}})
          .empty());
}
