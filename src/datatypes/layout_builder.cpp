#include "datatypes/layout_builder.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace dcuda::datatypes {

bool strided_runs(const std::vector<run>& runs) {
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

namespace {

// Whether two runs of one element share a byte (the runs in address order, each against the
// furthest end seen before it).
bool one_element_covers_a_byte_twice(std::vector<run> runs) {
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

// The smallest k >= 1 for which the runs shifted by k extents meet the runs (0: never). A byte
// at x = q * extent + r meets the byte of element k at the same r with quotient q + k, so the
// runs are cut into residue intervals mod the extent, each with its quotient, and a sweep over
// the residues finds the closest quotients of intervals that are open at once: whenever an
// interval opens, its nearest neighbours among the open quotients. Equal quotients at one residue
// are the same byte of one element (layout_overlaps), not a period.
std::uint64_t overlap_period(const flat_type& type) {
  if (type.size == 0) return 0;
  const std::int64_t extent = type.extent;
  if (extent == 0) return 1;
  struct interval {
    std::int64_t begin, end, quotient;
  };
  std::vector<interval> intervals;
  intervals.reserve(type.runs.size() * 2);
  for (const run& r : type.runs) {
    if (r.length > extent) return 1;
    std::int64_t quotient = r.displacement / extent;
    std::int64_t residue = r.displacement % extent;
    if (residue < 0) {
      residue += extent;
      --quotient;
    }
    if (residue + r.length <= extent) {
      intervals.push_back({residue, residue + r.length, quotient});
    } else {
      intervals.push_back({residue, extent, quotient});
      intervals.push_back({0, residue + r.length - extent, quotient + 1});
    }
  }
  struct event {
    std::int64_t at;
    bool opens;
    std::int64_t quotient;
  };
  std::vector<event> events;
  events.reserve(intervals.size() * 2);
  for (const interval& i : intervals) {
    events.push_back({i.begin, true, i.quotient});
    events.push_back({i.end, false, i.quotient});
  }
  // Half-open intervals: at one residue, those that end close before those that begin open.
  std::sort(events.begin(), events.end(), [](const event& a, const event& b) {
    return a.at != b.at ? a.at < b.at : (!a.opens && b.opens);
  });
  std::multiset<std::int64_t> open;
  std::uint64_t period = 0;
  const auto consider = [&](std::int64_t difference) {
    const auto k = static_cast<std::uint64_t>(difference);
    if (period == 0 || k < period) period = k;
  };
  for (const event& e : events) {
    if (!e.opens) {
      open.erase(open.find(e.quotient));
      continue;
    }
    const auto above = open.upper_bound(e.quotient);
    if (above != open.end()) consider(*above - e.quotient);
    const auto below = open.lower_bound(e.quotient);
    if (below != open.begin()) consider(e.quotient - *std::prev(below));
    open.insert(e.quotient);
  }
  return period;
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
  t.flags = one_element_covers_a_byte_twice(type.runs) ? protocol::layout_overlaps : 0u;
  t.unit = access_unit(type);
  t.overlap_period = overlap_period(type);
  t.run_count = type.runs.size();
  if (strided_runs(type.runs)) {
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
  // The run index (an empty type has none): one forward pass, the run holding every
  // run_index_bytes-th packed byte, the last byte for the entries past the end.
  if (t.size == 0) return built;
  const std::uint64_t entries = protocol::run_index_entries(t.size);
  built.run_index.reserve(entries);
  std::uint64_t run = 0;
  for (std::uint64_t entry = 0; entry < entries; ++entry) {
    const std::uint64_t byte = std::min(entry * protocol::run_index_bytes, t.size - 1);
    while (built.run_starts[run + 1] <= byte) ++run;
    built.run_index.push_back(run);
  }
  t.run_index = built.run_index.data();
  return built;
}

}  // namespace dcuda::datatypes
