#include "process_report.h"

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "bootstrap/cpu_placement.h"
#include "bootstrap/mpi_session.h"
#include "runtime/error.h"
#include "runtime/process_paths.h"
#include "text_table.h"

namespace dcuda::info {
namespace {

// One process's row as it travels to process 0.
struct row_message {
  std::int32_t node;
  std::int32_t local_index;
  char host[64];
  char gpu[48];
  char cpus[256];
};

void copy_text(char* to, std::size_t size, const std::string& text) {
  std::snprintf(to, size, "%s", text.c_str());
}

std::string host_name() {
  char name[64] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string gpu_text(int device) {
  char id[32] = {};
  DCUDA_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, device));
  return std::to_string(device) + " (" + id + ")";
}

const char* short_route_name(protocol::route path) {
  switch (path) {
    case protocol::route::local:
      return "-";
    case protocol::route::peer:
      return "peer";
    case protocol::route::network:
      return "network";
    case protocol::route::host_window:  // a put's route, never one between processes
      return "host window";
  }
  return "?";
}

}  // namespace

process_survey survey_processes(const bootstrap::process_layout* job, MPI_Comm world,
                                const visible_gpus& gpus, const runtime::settings& settings) {
  process_survey survey;
  const bootstrap::process_layout layout = job != nullptr ? *job : bootstrap::process_layout{};
  survey.launched = job != nullptr;
  std::optional<int> device;
  // The GPU dcuda_host_init takes (the same function decides).
  if (gpus.count > 0) {
    device = bootstrap::choose_gpu(layout.local_index, gpus.count, settings.device).device;
  }
  row_message mine{};
  mine.node = layout.node_index;
  mine.local_index = layout.local_index;
  copy_text(mine.host, sizeof mine.host, host_name());
  copy_text(mine.gpu, sizeof mine.gpu, device ? gpu_text(*device) : "none");
  copy_text(mine.cpus, sizeof mine.cpus, bootstrap::cpu_list_text(bootstrap::allowed_cpus()));

  const auto count = static_cast<std::size_t>(layout.process_count);
  std::vector<row_message> rows(count);
  std::vector<std::uint8_t> routes(count * count, 0);
  if (job == nullptr) {
    rows[0] = mine;
    survey.delivery_agent = false;
    routes[0] = static_cast<std::uint8_t>(protocol::route::local);
  } else {
    DCUDA_MPI_CHECK(
        MPI_Gather(&mine, sizeof mine, MPI_BYTE, rows.data(), sizeof mine, MPI_BYTE, 0, world));
    int all_have_gpus = device ? 1 : 0;
    DCUDA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &all_have_gpus, 1, MPI_INT, MPI_MIN, world));
    if (all_have_gpus == 0) {
      survey.paths_unknown = "some process has no CUDA GPU";
    } else {
      DCUDA_CUDA_CHECK(cudaSetDevice(*device));
      const runtime::process_paths paths =
          runtime::decide_paths(layout, world, *device, settings.force_network);
      // As dcuda_host_init decides it (runtime/host_setup.cpp, count_ranks).
      survey.delivery_agent = layout.process_count > 1 && !paths.all_peers();
      std::vector<std::uint8_t> my_routes(count);
      for (std::size_t p = 0; p < count; ++p) {
        my_routes[p] = static_cast<std::uint8_t>(paths.route_to(static_cast<int>(p)));
      }
      DCUDA_MPI_CHECK(MPI_Gather(my_routes.data(), static_cast<int>(count), MPI_BYTE, routes.data(),
                                 static_cast<int>(count), MPI_BYTE, 0, world));
    }
  }
  for (const row_message& row : rows) {
    survey.rows.push_back({row.node, row.local_index, row.host, row.gpu, row.cpus});
  }
  if (survey.paths_unknown.empty()) {
    for (std::uint8_t route : routes) {
      survey.paths.push_back(short_route_name(static_cast<protocol::route>(route)));
    }
  }
  return survey;
}

void print_processes(const process_survey& survey) {
  std::printf("\nprocesses (%zu, %s)\n", survey.rows.size(),
              survey.launched ? "started by an MPI launcher" : "no MPI launcher: one process");
  text_table table({"process", "node", "host", "local index", "GPU", "CPUs"});
  for (std::size_t p = 0; p < survey.rows.size(); ++p) {
    const process_row& row = survey.rows[p];
    table.add({std::to_string(p), std::to_string(row.node), row.host,
               std::to_string(row.local_index), row.gpu, row.cpus});
  }
  table.print();
  if (survey.rows.size() < 2) return;

  std::printf(
      "\npaths (row: from, column: to; peer: the GPUs store into each other's memory, network: "
      "through the host proxies over MPI)\n");
  if (!survey.paths_unknown.empty()) {
    std::printf("  unknown: %s\n", survey.paths_unknown.c_str());
    return;
  }
  std::vector<std::string> header{"from\\to"};
  for (std::size_t to = 0; to < survey.rows.size(); ++to) header.push_back(std::to_string(to));
  text_table matrix(header);
  for (std::size_t from = 0; from < survey.rows.size(); ++from) {
    std::vector<std::string> row{std::to_string(from)};
    for (std::size_t to = 0; to < survey.rows.size(); ++to) {
      row.push_back(survey.paths[from * survey.rows.size() + to]);
    }
    matrix.add(row);
  }
  matrix.print();
}

}  // namespace dcuda::info
