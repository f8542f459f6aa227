// Device memory shared between the processes of a node (CUDA IPC, DESIGN.md section 3): a
// process exports the allocation behind a pointer; a peer opens it once and keeps it mapped
// until the mapping object goes away.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <map>
#include <utility>

namespace dcuda::runtime {

// The IPC handle of the allocation that contains `pointer`, and where the pointer lies in it.
struct exported_memory {
  cudaIpcMemHandle_t handle{};
  std::size_t offset = 0;  // of `pointer` from the allocation's base
};
exported_memory export_memory(const void* pointer);

class peer_mappings {
 public:
  peer_mappings() = default;
  peer_mappings(const peer_mappings&) = delete;
  peer_mappings& operator=(const peer_mappings&) = delete;
  ~peer_mappings();

  // The base of the allocation `handle` names (exported by process `process`), mapped into this
  // process; opened on first use.
  char* open(int process, const cudaIpcMemHandle_t& handle);

 private:
  using key = std::pair<int, std::array<char, sizeof(cudaIpcMemHandle_t)>>;
  std::map<key, char*> opened_;
};

}  // namespace dcuda::runtime
