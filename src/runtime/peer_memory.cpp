#include "runtime/peer_memory.h"

#include <cstring>

#include "bootstrap/mpi_session.h"
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

std::vector<mapped_export> exchange_exports(const process_paths& paths, const void* pointer,
                                            peer_mappings& mappings) {
  struct export_card {
    cudaIpcMemHandle_t handle;
    std::uint64_t base;    // of the allocation, in the exporting process; 0: nothing offered
    std::uint64_t offset;  // of the pointer in the allocation
  };
  export_card mine{};
  if (pointer != nullptr) {
    const exported_memory exported = export_memory(pointer);
    mine.handle = exported.handle;
    mine.base = reinterpret_cast<std::uint64_t>(pointer) - exported.offset;
    mine.offset = exported.offset;
  }
  std::vector<export_card> cards(static_cast<std::size_t>(paths.process_count()));
  DCUDA_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE,
                                paths.world));
  std::vector<mapped_export> mapped(cards.size());
  for (std::size_t p = 0; p < cards.size(); ++p) {
    if (paths.routes[p] != protocol::route::peer || cards[p].base == 0) continue;
    mapped[p] = {mappings.open(static_cast<int>(p), cards[p].handle), cards[p].base,
                 cards[p].offset};
  }
  return mapped;
}

}  // namespace dcuda::runtime
