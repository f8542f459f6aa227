#include "datatypes/layout_builder.h"

#include <algorithm>

namespace dcuda::datatypes {
namespace {

bool strided(const std::vector<run>& runs) {
  if (runs.empty()) return false;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].length != runs[0].length) return false;
    if (runs[i].displacement - runs[i - 1].displacement !=
        runs[1].displacement - runs[0].displacement) {
      return false;
    }
  }
  return true;
}

// Whether two runs of one element share a byte (the runs in address order, each against the
// furthest end seen before it).
bool covers_a_byte_twice(std::vector<run> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const run& a, const run& b) { return a.displacement < b.displacement; });
  for (std::size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].displacement < runs[i - 1].displacement + runs[i - 1].length) return true;
    if (runs[i].displacement + runs[i].length < runs[i - 1].displacement + runs[i - 1].length) {
      runs[i] = runs[i - 1];  // the earlier run reaches further: compare the next with it
    }
  }
  return false;
}

std::uint32_t access_unit(const flat_type& type) {
  std::uint64_t bits = static_cast<std::uint64_t>(type.extent);
  for (const run& r : type.runs) {
    bits |= static_cast<std::uint64_t>(r.displacement) | static_cast<std::uint64_t>(r.length);
  }
  std::uint32_t unit = 16;
  while (unit > 1 && bits % unit != 0) unit /= 2;
  return unit;
}

}  // namespace

built_layout build_layout(const flat_type& type) {
  built_layout built;
  protocol::type_layout& t = built.layout;
  t.size = static_cast<std::uint64_t>(type.size);
  t.extent = type.extent;
  t.true_lb = type.true_lb;
  t.true_ub = type.true_ub;
  t.flags = covers_a_byte_twice(type.runs) ? protocol::layout_overlaps : 0u;
  t.unit = access_unit(type);
  t.run_count = type.runs.size();
  if (strided(type.runs)) {
    t.kind = protocol::layout_kind::strided;
    t.first = type.runs[0].displacement;
    t.stride = type.runs.size() > 1 ? type.runs[1].displacement - type.runs[0].displacement : 0;
    t.run_bytes = static_cast<std::uint64_t>(type.runs[0].length);
    return built;
  }
  t.kind = protocol::layout_kind::listed;
  built.displacements.reserve(type.runs.size());
  built.run_starts.reserve(type.runs.size() + 1);
  std::uint64_t packed = 0;
  for (const run& r : type.runs) {
    built.displacements.push_back(r.displacement);
    built.run_starts.push_back(packed);
    packed += static_cast<std::uint64_t>(r.length);
  }
  built.run_starts.push_back(packed);
  t.displacements = built.displacements.data();
  t.run_starts = built.run_starts.data();
  return built;
}

}  // namespace dcuda::datatypes
