// Device memory shared between the processes of a node (CUDA IPC): a
// process exports the allocation behind a pointer; a peer opens it once and keeps it mapped
// until the mapping object goes away.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "runtime/process_paths.h"

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

// What exchange_exports returns for one process: the allocation it offered, mapped into this
// process (null: it offered none, or it is not reached by the peer path), the allocation's base
// in the offering process, and the offered pointer's offset in it.
struct mapped_export {
  char* mapped_base = nullptr;
  std::uint64_t exporter_base = 0;
  std::uint64_t offset = 0;
};
// Collective over paths.world: every process offers the device allocation around `pointer`
// (null: none); each maps, through `mappings`, those of the processes it reaches by the peer path.
std::vector<mapped_export> exchange_exports(const process_paths& paths, const void* pointer,
                                            peer_mappings& mappings);

}  // namespace dcuda::runtime
