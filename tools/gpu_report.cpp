#include "gpu_report.h"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "runtime/error.h"
#include "text_table.h"

namespace dcuda::info {
namespace {

std::string gibibytes(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  return text;
}

std::string bus_id(int device) {
  char id[32] = {};
  DCUDA_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, device));
  return id;
}

// "no", or "yes" with the performance rank (lower is faster) and whether atomics are native.
std::string peer_access(int from, int to) {
  int can = 0;
  DCUDA_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (can == 0) return "no";
  int rank = 0;
  int atomics = 0;
  DCUDA_CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, from, to));
  DCUDA_CUDA_CHECK(
      cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, from, to));
  return "yes r" + std::to_string(rank) + (atomics != 0 ? " atomics" : "");
}

}  // namespace

visible_gpus find_gpus() {
  visible_gpus gpus;
  const cudaError_t status = cudaGetDeviceCount(&gpus.count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    gpus.count = 0;
    gpus.missing_reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
                          cudaGetErrorString(status) + ")";
  } else if (gpus.count == 0) {
    gpus.missing_reason = "cudaGetDeviceCount found 0 devices";
  }
  return gpus;
}

void print_gpus(const visible_gpus& gpus) {
  std::printf("\nGPUs\n");
  if (gpus.count == 0) {
    std::printf("  no CUDA GPU visible: %s\n", gpus.missing_reason.c_str());
    return;
  }
  text_table table({"GPU", "name", "compute capability", "SMs", "memory", "PCI bus id"});
  for (int device = 0; device < gpus.count; ++device) {
    cudaDeviceProp properties{};
    DCUDA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    table.add({std::to_string(device), properties.name,
               std::to_string(properties.major) + "." + std::to_string(properties.minor),
               std::to_string(properties.multiProcessorCount), gibibytes(properties.totalGlobalMem),
               bus_id(device)});
  }
  table.print();

  std::printf(
      "\npeer access (row: from, column: to; yes r<n>: cudaDeviceCanAccessPeer, performance "
      "rank n, lower is faster; atomics: native atomics)\n");
  std::vector<std::string> header{"from\\to"};
  for (int to = 0; to < gpus.count; ++to) header.push_back(std::to_string(to));
  text_table matrix(header);
  for (int from = 0; from < gpus.count; ++from) {
    std::vector<std::string> row{std::to_string(from)};
    for (int to = 0; to < gpus.count; ++to) row.push_back(from == to ? "-" : peer_access(from, to));
    matrix.add(row);
  }
  matrix.print();
}

}  // namespace dcuda::info
