// One GPU's copy of the committed datatypes (protocol/type_table.h): the entries the kernels read
// and each listed layout's tables, in that GPU's memory. The registry keeps one per GPU that used
// datatypes and updates them on commit and free.
#pragma once

#include <cstdint>
#include <vector>

#include "datatypes/layout_builder.h"
#include "dcuda/detail/protocol/type_table.h"
#include "runtime/cuda_memory.h"

namespace dcuda::datatypes {

class device_type_table {
 public:
  // The table of `device`, every entry empty.
  explicit device_type_table(int device);

  int device() const { return device_; }
  const protocol::type_entry* entries() const { return entries_.get(); }
  // The layout of `type` as this GPU reads it (its tables in this GPU's memory), from the host's
  // copy of the entries; null unless it is in the table under the handle's generation.
  const protocol::type_layout* layout(dcuda_datatype type) const {
    return protocol::committed_layout(mirror_.data(), type);
  }
  // Uploads a committed type's layout and entry.
  void put(std::uint32_t id, std::uint32_t generation, const built_layout& built);
  // Waits until the GPU has finished everything queued (a kernel may still read the type, from
  // the table or from a copy of its layout in its parameters), then empties the entry and frees
  // the type's tables.
  void remove(std::uint32_t id);

 private:
  struct layout_tables {
    runtime::device_array<std::int64_t> displacements;
    runtime::device_array<std::uint64_t> run_starts;
    runtime::device_array<std::uint64_t> run_index;
  };

  int device_;
  runtime::device_array<protocol::type_entry> entries_;
  std::vector<protocol::type_entry> mirror_;  // what entries_ holds, on the host
  std::vector<layout_tables> tables_;         // by id
};

}  // namespace dcuda::datatypes
