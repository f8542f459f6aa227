// The committed datatypes of a process as its GPU reads them: one entry per handle id, written
// by the host (src/datatypes/device_type_table.cpp) while no kernel of the process runs (commit
// and free are host calls between runs; free waits for the GPU), read by the typed calls.
#pragma once

#include <cstdint>

#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/portability.h"
#include "dcuda/detail/protocol/type_layout.h"

namespace dcuda::protocol {

// Datatypes alive at once in one process, the predefined ones included; ids run from 1.
inline constexpr std::uint32_t max_datatypes = 4096;

struct type_entry {
  std::uint32_t generation;  // of the committed type in this slot; 0: none
  std::uint32_t reserved;
  type_layout layout;  // its tables in the same GPU's memory
};

// The layout of a committed type, or null for any other handle (never created, freed, not
// committed, DCUDA_DATATYPE_NULL): the handle's generation must be the entry's.
DCUDA_HD inline const type_layout* committed_layout(const type_entry* table, dcuda_datatype type) {
  if (table == nullptr || type.id == 0 || type.id > max_datatypes) return nullptr;
  const type_entry& entry = table[type.id];
  return entry.generation != 0 && entry.generation == type.generation ? &entry.layout : nullptr;
}

}  // namespace dcuda::protocol
