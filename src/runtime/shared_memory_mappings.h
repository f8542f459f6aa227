// Device allocations that the processes of a node share before any kernel runs
// (dcuda_host_share_memory, docs/api.md): each process maps those of the processes it reaches by
// the peer path, so that window creation finds them mapped instead of mapping them while the
// kernel runs.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "runtime/peer_memory.h"
#include "runtime/process_paths.h"

namespace dcuda::runtime {

class shared_memory_mappings {
 public:
  shared_memory_mappings() = default;
  shared_memory_mappings(const shared_memory_mappings&) = delete;
  shared_memory_mappings& operator=(const shared_memory_mappings&) = delete;

  // Collective over paths.world: every process names one device allocation (any pointer into
  // it) or none; each maps those of the processes it reaches by the peer path, now. Returns what
  // every process offered, as mapped here (exchange_exports).
  std::vector<mapped_export> share(const process_paths& paths, const void* allocation);
  // Where the allocation that `process` shared, based at `exporter_base` in its address space,
  // is mapped in this one; null when it was not shared.
  char* mapping(int process, std::uint64_t exporter_base) const;

 private:
  peer_mappings mappings_;
  std::map<std::pair<int, std::uint64_t>, char*> shared_;  // (process, its base) -> mapped base
};

}  // namespace dcuda::runtime
