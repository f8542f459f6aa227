#include "datatypes/type_registry.h"

#include <utility>

#include "runtime/error.h"

namespace dcuda::datatypes {
namespace {

[[noreturn]] void refuse(const char* call, dcuda_error_code code, const std::string& what) {
  throw runtime::error(code, std::string(call) + ": " + what);
}

}  // namespace

std::string handle_text(dcuda_datatype type) {
  return "{id " + std::to_string(type.id) + ", generation " + std::to_string(type.generation) + "}";
}

type_registry& type_registry::instance() {
  static type_registry registry;
  return registry;
}

type_registry::type_registry() : slots_(1) {
  // In the order of their ids (include/dcuda/datatype.h).
  const std::pair<dcuda_datatype, std::int64_t> predefined_types[] = {
      {DCUDA_BYTE, 1},  {DCUDA_CHAR, 1},  {DCUDA_INT, 4},    {DCUDA_UNSIGNED, 4},
      {DCUDA_INT64, 8}, {DCUDA_FLOAT, 4}, {DCUDA_DOUBLE, 8},
  };
  for (const auto& [handle, bytes] : predefined_types) {
    slot s;
    s.generation = handle.generation;
    s.live = true;
    s.predefined = true;
    s.flat = std::make_shared<const flat_type>(predefined(bytes));
    s.layout = std::make_shared<const built_layout>(build_layout(*s.flat));
    slots_.push_back(std::move(s));
  }
}

const type_registry::slot& type_registry::live_slot(dcuda_datatype type, const char* call,
                                                    const char* what) const {
  const std::string named = std::string(what) + " " + handle_text(type);
  if (type.id == 0) {
    refuse(call, DCUDA_ERROR_INVALID_ARGUMENT, std::string(what) + " is DCUDA_DATATYPE_NULL");
  }
  if (type.id >= slots_.size()) {
    refuse(call, DCUDA_ERROR_INVALID_ARGUMENT, named + " is not one dcuda created");
  }
  const slot& s = slots_[type.id];
  if (s.generation != type.generation || !s.live) {
    // An older generation, or this one after its free: a freed type. A newer one: a forgery.
    const bool freed = type.generation != 0 && type.generation <= s.generation;
    refuse(call, DCUDA_ERROR_INVALID_ARGUMENT,
           named + (freed ? " was freed" : " is not one dcuda created"));
  }
  return s;
}

dcuda_datatype type_registry::add(flat_type type, const char* call) {
  auto flat = std::make_shared<const flat_type>(std::move(type));
  const std::lock_guard<std::mutex> lock(mutex_);
  std::uint32_t id = 0;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else if (slots_.size() < max_types + 1) {
    id = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    refuse(
        call, DCUDA_ERROR_INVALID_STATE,
        std::to_string(max_types) + " datatypes are alive already: free some with dcuda_type_free");
  }
  slot& s = slots_[id];
  if (++s.generation == 0) s.generation = 1;  // 0 is no type's (an empty entry on the GPU)
  s.live = true;
  s.flat = std::move(flat);
  s.layout.reset();
  return {id, s.generation};
}

std::shared_ptr<const flat_type> type_registry::flat(dcuda_datatype type, const char* call,
                                                     const char* what) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return live_slot(type, call, what).flat;
}

void type_registry::commit(dcuda_datatype type, const char* call) {
  std::shared_ptr<const flat_type> flat;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const slot& s = live_slot(type, call);
    if (s.layout) return;  // committed already (a predefined type, or a second commit)
    flat = s.flat;
  }
  auto layout = std::make_shared<const built_layout>(build_layout(*flat));
  const std::lock_guard<std::mutex> lock(mutex_);
  slot& s = slots_[type.id];
  if (!s.live || s.generation != type.generation || s.layout)
    return;  // freed or committed meanwhile
  for (auto& [device, table] : device_tables_) table->put(type.id, type.generation, *layout);
  s.layout = std::move(layout);
}

void type_registry::free(dcuda_datatype type, const char* call) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const slot& found = live_slot(type, call);
  if (found.predefined) {
    refuse(call, DCUDA_ERROR_INVALID_ARGUMENT,
           "the datatype " + handle_text(type) + " is predefined and cannot be freed");
  }
  if (found.layout) {
    for (auto& [device, table] : device_tables_) table->remove(type.id);
  }
  slot& s = slots_[type.id];
  s.live = false;
  s.flat.reset();
  s.layout.reset();
  free_ids_.push_back(type.id);
}

std::shared_ptr<const built_layout> type_registry::layout(dcuda_datatype type,
                                                          const char* call) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const slot& s = live_slot(type, call);
  if (!s.layout) {
    refuse(call, DCUDA_ERROR_INVALID_ARGUMENT,
           "the datatype " + handle_text(type) + " is not committed (dcuda_type_commit)");
  }
  return s.layout;
}

}  // namespace dcuda::datatypes

namespace dcuda::datatypes {

device_type_table& type_registry::table_of(int device) {
  auto found = device_tables_.find(device);
  if (found != device_tables_.end()) return *found->second;
  auto table = std::make_unique<device_type_table>(device);
  for (std::uint32_t id = 1; id < slots_.size(); ++id) {
    const slot& s = slots_[id];
    if (s.live && s.layout) table->put(id, s.generation, *s.layout);
  }
  return *device_tables_.emplace(device, std::move(table)).first->second;
}

const protocol::type_entry* type_registry::device_table(int device) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return table_of(device).entries();
}

protocol::type_layout type_registry::device_layout(int device, dcuda_datatype type,
                                                   const char* call) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const slot& s = live_slot(type, call);
  if (!s.layout) {
    refuse(call, DCUDA_ERROR_INVALID_ARGUMENT,
           "the datatype " + handle_text(type) + " is not committed (dcuda_type_commit)");
  }
  const protocol::type_layout* on_gpu = table_of(device).layout(type);
  if (on_gpu == nullptr) {
    refuse(call, DCUDA_ERROR_INTERNAL,
           "the datatype " + handle_text(type) + " is committed but missing from GPU " +
               std::to_string(device) + "'s table");
  }
  return *on_gpu;
}

}  // namespace dcuda::datatypes
