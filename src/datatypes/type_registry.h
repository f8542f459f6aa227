// The process's datatypes: each handle's slot, its generation, its flat type and, once committed,
// its layout. Thread-safe; a type must not be freed while another thread still uses it (as in MPI).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "datatypes/device_type_table.h"
#include "datatypes/flat_type.h"
#include "datatypes/layout_builder.h"
#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/type_table.h"

namespace dcuda::datatypes {

// Types alive at once in one process, the predefined ones included.
inline constexpr std::uint32_t max_types = protocol::max_datatypes;

// "{id 12, generation 3}": how errors name a handle.
std::string handle_text(dcuda_datatype type);

class type_registry {
 public:
  // The process's registry, with the predefined types in it.
  static type_registry& instance();

  // A new, uncommitted type.
  dcuda_datatype add(flat_type type, const char* call);
  // The flat type of a live type, committed or not; an error naming `call` for any other handle.
  // `what` names the argument in the error ("the datatype", "types[2]").
  std::shared_ptr<const flat_type> flat(dcuda_datatype type, const char* call,
                                        const char* what = "the datatype") const;
  void commit(dcuda_datatype type, const char* call);
  void free(dcuda_datatype type, const char* call);
  // The layout of a committed type (its tables in host memory); an error naming `call` for an
  // uncommitted, freed or unknown handle.
  std::shared_ptr<const built_layout> layout(dcuda_datatype type, const char* call) const;
  // The committed types as GPU `device` reads them: its table, made (with every committed type
  // in it) on the first call for that GPU and kept up to date by commit and free from then on.
  const protocol::type_entry* device_table(int device);
  // The layout of a committed type as GPU `device` reads it (its tables in that GPU's memory, the
  // table made as by device_table); an error naming `call` for any other handle.
  protocol::type_layout device_layout(int device, dcuda_datatype type, const char* call);

 private:
  struct slot {
    std::uint32_t generation = 0;  // of the type in it now, or of the last one when free
    bool live = false;
    bool predefined = false;
    std::shared_ptr<const flat_type> flat;
    std::shared_ptr<const built_layout> layout;  // set by commit
  };

  type_registry();
  const slot& live_slot(dcuda_datatype type, const char* call,
                        const char* what = "the datatype") const;  // mutex held
  device_type_table& table_of(int device);                         // mutex held

  mutable std::mutex mutex_;
  std::vector<slot> slots_;  // index: the handle's id; slot 0 never used
  std::vector<std::uint32_t> free_ids_;
  std::map<int, std::unique_ptr<device_type_table>> device_tables_;  // by CUDA device
};

}  // namespace dcuda::datatypes
