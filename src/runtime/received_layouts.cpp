#include "runtime/received_layouts.h"

#include <cstring>

#include "datatypes/flat_type.h"
#include "datatypes/layout_builder.h"
#include "datatypes/layout_wire.h"

namespace dcuda::runtime {
namespace {

std::string layout_name(int source_process, std::uint32_t id, std::uint32_t generation) {
  return "process " + std::to_string(source_process) + " sent the layout of its type {id " +
         std::to_string(id) + ", generation " + std::to_string(generation) + "}";
}

// `bytes` rounded up to 16, so that every table after the layout stays aligned.
std::size_t aligned(std::size_t bytes) {
  return (bytes + 15) / 16 * 16;
}

}  // namespace

std::uint64_t received_layouts::largest_encoding() {
  return datatypes::encoded_layout_bytes(static_cast<std::size_t>(datatypes::max_runs));
}

std::string received_layouts::take_part(int source_process,
                                        const protocol::layout_part_header& head,
                                        std::span<const char> part) {
  const key which{source_process, head.type_id, head.type_generation};
  const auto name = [&] { return layout_name(source_process, head.type_id, head.type_generation); };
  if (built_.count(which) != 0) return name() + " twice";
  if (head.encoded_bytes == 0 || head.encoded_bytes > largest_encoding()) {
    return name() + ": an encoding of " + std::to_string(head.encoded_bytes) + " bytes (at most " +
           std::to_string(largest_encoding()) + ")";
  }
  std::vector<char>& encoded = assembling_[which];
  // Parts come in order, one after another, and none reaches past the encoding's end.
  if (head.part_at != encoded.size() || part.size() > head.encoded_bytes - head.part_at) {
    const std::size_t had = encoded.size();
    assembling_.erase(which);
    return name() + ": a part of " + std::to_string(part.size()) + " bytes at " +
           std::to_string(head.part_at) + " of " + std::to_string(head.encoded_bytes) +
           " bytes, after " + std::to_string(had) + " bytes had come";
  }
  encoded.insert(encoded.end(), part.begin(), part.end());
  if (encoded.size() < head.encoded_bytes) return {};
  std::vector<char> complete = std::move(encoded);
  assembling_.erase(which);
  return build(which, complete);
}

std::string received_layouts::build(const key& which, const std::vector<char>& encoded) {
  const auto [process, id, generation] = which;
  std::string problem;
  const std::optional<datatypes::flat_type> flat =
      datatypes::decode_layout(std::as_bytes(std::span(encoded)), problem);
  if (!flat) return layout_name(process, id, generation) + ": " + problem;
  const datatypes::built_layout built = datatypes::build_layout(*flat);
  // One pinned buffer: the layout, then its tables, each 16-byte aligned.
  const std::size_t layout_bytes = aligned(sizeof(protocol::type_layout));
  const std::size_t displacement_bytes = aligned(built.displacements.size() * sizeof(std::int64_t));
  const std::size_t start_bytes = aligned(built.run_starts.size() * sizeof(std::uint64_t));
  const std::size_t index_bytes = aligned(built.run_index.size() * sizeof(std::uint64_t));
  const std::size_t total = layout_bytes + displacement_bytes + start_bytes + index_bytes;
  std::optional<pinned_pool::buffer> memory;
  if (pool_.can_take(total)) memory = pool_.take(total);
  if (!memory) {
    return layout_name(process, id, generation) + ": " + std::to_string(total) +
           " bytes built, more than the pinned memory left for received layouts";
  }
  char* const base = memory->data();
  protocol::type_layout layout = built.layout;
  const auto place = [&](std::size_t at, const auto& table) -> char* {
    if (table.empty()) return nullptr;
    std::memcpy(base + at, table.data(), table.size() * sizeof(table[0]));
    return base + at;
  };
  std::size_t at = layout_bytes;
  layout.displacements = reinterpret_cast<const std::int64_t*>(place(at, built.displacements));
  at += displacement_bytes;
  layout.run_starts = reinterpret_cast<const std::uint64_t*>(place(at, built.run_starts));
  at += start_bytes;
  layout.run_index = reinterpret_cast<const std::uint64_t*>(place(at, built.run_index));
  std::memcpy(base, &layout, sizeof layout);
  built_.emplace(which, std::move(*memory));
  return {};
}

const protocol::type_layout* received_layouts::find(int source_process, std::uint32_t id,
                                                    std::uint32_t generation) const {
  const auto found = built_.find(key{source_process, id, generation});
  if (found == built_.end()) return nullptr;
  return reinterpret_cast<const protocol::type_layout*>(found->second.data());
}

}  // namespace dcuda::runtime
