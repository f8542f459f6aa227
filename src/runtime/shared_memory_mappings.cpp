#include "runtime/shared_memory_mappings.h"

#include <vector>

namespace dcuda::runtime {

std::vector<mapped_export> shared_memory_mappings::share(const process_paths& paths,
                                                         const void* allocation) {
  const std::vector<mapped_export> mapped = exchange_exports(paths, allocation, mappings_);
  for (std::size_t p = 0; p < mapped.size(); ++p) {
    if (mapped[p].mapped_base != nullptr) {
      shared_[{static_cast<int>(p), mapped[p].exporter_base}] = mapped[p].mapped_base;
    }
  }
  return mapped;
}

char* shared_memory_mappings::mapping(int process, std::uint64_t exporter_base) const {
  const auto found = shared_.find({process, exporter_base});
  return found == shared_.end() ? nullptr : found->second;
}

}  // namespace dcuda::runtime
