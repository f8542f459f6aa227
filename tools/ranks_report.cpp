#include "ranks_report.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "build_configuration.h"
#include "minimal_kernel.h"
#include "rank_capacity.h"
#include "runtime/error.h"
#include "runtime/launch_config.h"
#include "text_table.h"

namespace dcuda::info {
namespace {

std::string limit_text(int limit) {
  return limit < 0 ? "-" : std::to_string(limit);
}

// The ranks the runtime would run, or "none" with the runtime's reason noted.
template <typename Plan>
std::string ranks_text(Plan plan, std::vector<std::string>& notes) {
  try {
    return std::to_string(plan().ranks);
  } catch (const runtime::error& failure) {
    if (std::find(notes.begin(), notes.end(), failure.what()) == notes.end()) {
      notes.push_back(failure.what());
    }
    return "none";
  }
}

struct gpu_row {
  std::string name;
  cudaOccDeviceProp properties;
  int device = -1;  // -1: a reference GPU, not one of this machine
};

}  // namespace

void print_ranks_per_gpu(const options& given, const visible_gpus& gpus,
                         std::optional<bool> delivery_agent, std::optional<int> max_ranks) {
  std::vector<gpu_row> rows;
  std::vector<std::string> notes;
  for (int device = 0; device < gpus.count; ++device) {
    cudaDeviceProp properties{};
    DCUDA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    rows.push_back({std::to_string(device) + " " + properties.name, properties, device});
  }
  if (gpus.count == 0) {
    for (const std::string& architecture : built_architectures()) {
      if (const reference_gpu* gpu = reference_gpu_for(architecture)) {
        rows.push_back({std::string(gpu->name) + " (sm_" + architecture + ", no GPU here)",
                        gpu->properties, -1});
      } else {
        notes.push_back("no reference GPU for sm_" + architecture);
      }
    }
  }

  const bool measured = !given.registers.has_value();
  kernel_resources kernel;
  kernel.threads_per_rank = given.threads_per_rank;
  kernel.registers_per_thread = given.registers.value_or(0);
  kernel.shared_bytes_per_rank = given.shared_bytes.value_or(dcuda_state_bytes());
  std::printf("\nranks per GPU at %d threads per rank", given.threads_per_rank);
  if (measured) {
    if (gpus.count == 0) {
      std::printf(
          "\n  the built-in kernel's registers are measured on a GPU; without one, give "
          "--registers R (and --shared-memory BYTES)\n");
      return;
    }
    cudaFuncAttributes uses{};
    DCUDA_CUDA_CHECK(cudaFuncGetAttributes(&uses, reinterpret_cast<const void*>(minimal_kernel())));
    kernel.registers_per_thread = uses.numRegs;
    kernel.shared_bytes_per_rank = given.shared_bytes.value_or(uses.sharedSizeBytes);
    kernel.max_threads_per_block = uses.maxThreadsPerBlock;
  }
  std::printf(", %d registers per thread, %zu bytes of shared memory per rank (%s)\n",
              kernel.registers_per_thread, kernel.shared_bytes_per_rank,
              measured ? "a minimal dcuda kernel: a window, one put_notify, one wait" : "as given");

  text_table table({"GPU", "SMs", "ranks/SM", "by threads", "by registers", "by shared memory",
                    "by blocks", "limited by", "ranks", "ranks with network"});
  for (const gpu_row& row : rows) {
    rank_capacity capacity;
    try {
      capacity = capacity_per_sm(row.properties, kernel);
    } catch (const std::invalid_argument& failure) {
      notes.push_back(row.name + ": " + failure.what());
      continue;
    }
    const int sms = row.properties.numSms;
    const auto plan = [&](int reserved) {
      // The built-in kernel on a GPU of this machine: exactly what dcuda_host_init does.
      if (measured && row.device >= 0) {
        return ranks_text(
            [&] {
              DCUDA_CUDA_CHECK(cudaSetDevice(row.device));
              return runtime::plan_launch(minimal_kernel(), row.device, kernel.threads_per_rank,
                                          max_ranks, reserved);
            },
            notes);
      }
      if (capacity.ranks_per_sm == 0) return std::string("none");
      return ranks_text(
          [&] { return runtime::plan_ranks(capacity.ranks_per_sm, sms, max_ranks, reserved); },
          notes);
    };
    table.add({row.name, std::to_string(sms), std::to_string(capacity.ranks_per_sm),
               limit_text(capacity.by_threads), limit_text(capacity.by_registers),
               limit_text(capacity.by_shared_memory), limit_text(capacity.by_blocks),
               capacity.limited_by, plan(0), plan(1)});
  }
  table.print();
  std::printf(
      "  ranks: every process alone or reached by the peer path; ranks with network: one "
      "resident block kept for the delivery agent\n");
  if (max_ranks) std::printf("  capped at %d ranks by DCUDA_RANKS_PER_DEVICE\n", *max_ranks);
  if (delivery_agent) {
    std::printf("  this job: %s\n",
                *delivery_agent ? "ranks with network (some process is reached through the network)"
                                : "ranks (no process is reached through the network)");
  }
  for (const std::string& note : notes) std::printf("  %s\n", note.c_str());
}

}  // namespace dcuda::info
