#include "runtime/peer_memory.h"

#include <cstring>

#include "runtime/driver_api.h"
#include "runtime/error.h"

namespace dcuda::runtime {

exported_memory export_memory(const void* pointer) {
  const allocation_range allocation = allocation_containing(pointer);
  exported_memory exported;
  DCUDA_CUDA_CHECK(cudaIpcGetMemHandle(&exported.handle, allocation.base));
  exported.offset = static_cast<std::size_t>(static_cast<const char*>(pointer) -
                                             static_cast<const char*>(allocation.base));
  return exported;
}

peer_mappings::~peer_mappings() {
  for (const auto& [owner, base] : opened_) cudaIpcCloseMemHandle(base);
}

char* peer_mappings::open(int process, const cudaIpcMemHandle_t& handle) {
  key k{process, {}};
  std::memcpy(k.second.data(), &handle, sizeof handle);
  const auto found = opened_.find(k);
  if (found != opened_.end()) return found->second;
  void* base = nullptr;
  DCUDA_CUDA_CHECK(cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess));
  opened_.emplace(k, static_cast<char*>(base));
  return static_cast<char*>(base);
}

}  // namespace dcuda::runtime
