// The processes of the job: each one's node, GPU and CPUs, and the path between each pair,
// decided by the runtime's own code (runtime/process_group.h) as dcuda_host_init decides it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu_report.h"
#include "runtime/process_group.h"
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

// Collective over the job when `group` is set.
process_survey survey_processes(runtime::process_group* group, const visible_gpus& gpus,
                                const runtime::settings& settings);

void print_processes(const process_survey& survey);

}  // namespace dcuda::info
