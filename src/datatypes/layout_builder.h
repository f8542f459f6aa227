// Commit's work on the host: a flat type as the copy engine reads it (protocol::type_layout),
// with the tables it points to owned here.
#pragma once

#include <cstdint>
#include <vector>

#include "datatypes/flat_type.h"
#include "dcuda/detail/protocol/type_layout.h"

namespace dcuda::datatypes {

struct built_layout {
  built_layout() = default;
  built_layout(const built_layout&) = delete;  // a copy's pointers would be the original's
  built_layout& operator=(const built_layout&) = delete;
  built_layout(built_layout&&) = default;  // a moved vector keeps its buffer
  built_layout& operator=(built_layout&&) = default;

  protocol::type_layout layout{};  // its pointers: the vectors below (listed layouts)
  std::vector<std::int64_t> displacements;
  std::vector<std::uint64_t> run_starts;
  std::vector<std::uint64_t> run_index;
};

// Whether build_layout makes `runs` a strided layout (one length, one stride) rather than a listed
// one, which also gets a run index of protocol::run_index_entries(size) entries.
bool strided_runs(const std::vector<run>& runs);

// The layout of `type`: strided where every run has one length and the runs one stride, listed
// otherwise; its access unit and whether one element covers a byte twice. The result's pointers
// point into itself: keep it where it is (moving a vector keeps its buffer).
built_layout build_layout(const flat_type& type);

}  // namespace dcuda::datatypes
