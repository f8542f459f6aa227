// The processes of the job: each one's node, GPU and CPUs, and the path between each pair,
// decided by the runtime's own code (runtime/process_paths.h) as dcuda_host_init decides it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu_report.h"
#include <mpi.h>

#include "bootstrap/process_layout.h"
#include "runtime/settings.h"

namespace dcuda::info {

struct process_row {
  int node = 0;
  int local_index = 0;
  std::string host;
  std::string gpu;   // "0 (0000:18:00.0)" or "none"
  std::string cpus;  // "0-3,8"
};

struct process_survey {
  bool launched = false;           // started by an MPI launcher
  std::vector<process_row> rows;   // per process (complete on process 0)
  std::vector<std::string> paths;  // [from * count + to]: "local", "peer", "network" (process 0)
  std::string paths_unknown;       // why there are no paths (a process without a GPU)
  std::optional<bool> delivery_agent;  // whether each GPU keeps a block for the delivery agent
};

// Collective over `world` (dcuda's duplicate of MPI_COMM_WORLD) when `job` is set, i.e. the
// process was started by an MPI launcher.
process_survey survey_processes(const bootstrap::process_layout* job, MPI_Comm world,
                                const visible_gpus& gpus, const runtime::settings& settings);

void print_processes(const process_survey& survey);

}  // namespace dcuda::info
