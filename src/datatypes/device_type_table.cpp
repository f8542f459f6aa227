#include "datatypes/device_type_table.h"

#include <cuda_runtime_api.h>

#include "runtime/error.h"

namespace dcuda::datatypes {
namespace {

template <typename T>
runtime::device_array<T> uploaded(const std::vector<T>& values) {
  runtime::device_array<T> array(values.size());
  if (!values.empty()) {
    DCUDA_CUDA_CHECK(
        cudaMemcpy(array.get(), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  return array;
}

}  // namespace

device_type_table::device_type_table(int device) : device_(device) {
  const runtime::device_scope scope(device_);
  entries_ = runtime::device_array<protocol::type_entry>(protocol::max_datatypes + 1);
  DCUDA_CUDA_CHECK(cudaMemset(entries_.get(), 0, entries_.size() * sizeof(protocol::type_entry)));
  tables_.resize(entries_.size());
  mirror_.resize(entries_.size());
}

void device_type_table::put(std::uint32_t id, std::uint32_t generation, const built_layout& built) {
  const runtime::device_scope scope(device_);
  layout_tables& tables = tables_.at(id);
  tables.displacements = uploaded(built.displacements);
  tables.run_starts = uploaded(built.run_starts);
  tables.run_index = uploaded(built.run_index);
  protocol::type_entry entry{};
  entry.generation = generation;
  entry.layout = built.layout;
  entry.layout.displacements = tables.displacements.get();
  entry.layout.run_starts = tables.run_starts.get();
  entry.layout.run_index = tables.run_index.get();  // null where the layout has none
  DCUDA_CUDA_CHECK(cudaMemcpy(entries_.get() + id, &entry, sizeof(entry), cudaMemcpyHostToDevice));
  mirror_.at(id) = entry;
  // A copy from pageable memory may return before it has landed, and the kernels that read the
  // table run on streams that do not wait for the legacy stream: done before commit returns.
  DCUDA_CUDA_CHECK(cudaDeviceSynchronize());
}

void device_type_table::remove(std::uint32_t id) {
  const runtime::device_scope scope(device_);
  DCUDA_CUDA_CHECK(cudaDeviceSynchronize());
  DCUDA_CUDA_CHECK(cudaMemset(entries_.get() + id, 0, sizeof(protocol::type_entry)));
  mirror_.at(id) = protocol::type_entry{};
  DCUDA_CUDA_CHECK(cudaDeviceSynchronize());  // the entry is empty before its tables go
  tables_.at(id) = layout_tables{};
}

}  // namespace dcuda::datatypes
