// The target layouts other processes sent this one for their typed puts on the network path
// (protocol/typed_piece.h), kept for the run. A layout arrives as the encoding of its runs
// (datatypes/layout_wire.h), possibly in several parts; once complete it is decoded, checked and
// built here, as commit builds one, so nothing the agent later reads was computed by the sender.
// The built layout and its tables are copied into pinned memory, where the delivery agent reads
// them (the proxy makes no CUDA calls while the kernel runs).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "dcuda/detail/protocol/type_layout.h"
#include "dcuda/detail/protocol/typed_piece.h"
#include "runtime/pinned_pool.h"

namespace dcuda::runtime {

class received_layouts {
 public:
  // `pool`: pinned memory for the built layouts (they stay until the run ends).
  explicit received_layouts(pinned_pool& pool) : pool_(pool) {}

  // One part of a type_layout operation from `source_process`. Returns an error text naming the
  // process and the bad field, empty when the part was taken; the layout is built with its last
  // part.
  std::string take_part(int source_process, const protocol::layout_part_header& head,
                        std::span<const char> part);

  // The layout `source_process` sent for its type (id, generation), in pinned memory; null when
  // none arrived.
  const protocol::type_layout* find(int source_process, std::uint32_t id,
                                    std::uint32_t generation) const;

  // Most bytes one encoded layout may have: a type of the most runs a process can commit.
  static std::uint64_t largest_encoding();

 private:
  using key = std::tuple<int, std::uint32_t, std::uint32_t>;  // process, id, generation
  std::string build(const key& which, const std::vector<char>& encoded);

  pinned_pool& pool_;
  std::map<key, std::vector<char>> assembling_;  // parts so far, by layout
  std::map<key, pinned_pool::buffer> built_;     // a type_layout, then its tables
};

}  // namespace dcuda::runtime
