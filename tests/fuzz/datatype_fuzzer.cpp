// The datatype engine on arbitrary nestings of its constructors (src/datatypes/flat_type.h), with
// any counts, lengths, strides and bounds the input spells, beside a byte-by-byte model of MPI's
// type maps built from the same steps. Properties: a constructor either refuses with an error or
// builds the model's type map and bounds; the committed layout's walk (protocol/type_layout.h)
// finds every packed byte where the model has it, its typed range covers exactly those bytes, and
// its overlap flag and period say exactly when elements cover a byte twice. Sanitizers catch the
// arithmetic that overflows on the way.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "datatypes/flat_type.h"
#include "datatypes/layout_builder.h"
#include "dcuda/detail/protocol/type_layout.h"
#include "fuzz_input.h"
#include "runtime/error.h"

namespace {

using dcuda::datatypes::block;
using dcuda::datatypes::flat_type;
using dcuda_fuzz::violated;

// The model of a type: every byte of its type map in order, and its bounds. Kept only while it
// stays small; a larger type is checked against its own walk alone.
struct model {
  std::vector<std::int64_t> bytes;
  std::int64_t lb = 0, ub = 0;
  bool exact = true;
};

constexpr std::size_t model_limit = 1 << 14;

struct typed {
  flat_type flat;
  model expected;
};

model blocks_model(const std::vector<std::pair<block, const model*>>& blocks) {
  model m;
  bool bounded = false;
  for (const auto& [b, old] : blocks) {
    if (b.copies == 0) continue;
    if (!old->exact) m.exact = false;
    const std::int64_t extent = b.old->extent;
    if (!old->bytes.empty() &&
        b.copies > static_cast<std::int64_t>(model_limit / old->bytes.size())) {
      m.exact = false;
    }
    for (std::int64_t c = 0; c < b.copies && m.exact && !old->bytes.empty(); ++c) {
      for (std::int64_t byte : old->bytes) m.bytes.push_back(b.displacement + c * extent + byte);
      if (m.bytes.size() > model_limit) m.exact = false;
    }
    const std::int64_t lb = b.displacement + b.old->lb;
    const std::int64_t ub = b.displacement + (b.copies - 1) * extent + b.old->lb + extent;
    m.lb = bounded ? std::min(m.lb, lb) : lb;
    m.ub = bounded ? std::max(m.ub, ub) : ub;
    bounded = true;
  }
  if (!m.exact) m.bytes.clear();
  return m;
}

// One constructor step from the input, over the types built so far; false when it refused.
bool step(dcuda_fuzz::input& in, std::vector<typed>& types) {
  const auto pick = [&](int low, int high) {
    return low + static_cast<int>(in.take<std::uint8_t>() % static_cast<unsigned>(high - low + 1));
  };
  const typed& old = types[static_cast<std::size_t>(pick(0, static_cast<int>(types.size()) - 1))];
  const int kind = pick(0, 3);
  // Occasionally a huge count or stride: the refusals and the overflow checks.
  const bool huge = pick(0, 15) == 0;
  const std::int64_t count = huge ? (std::int64_t{1} << pick(20, 62)) : pick(0, 5);
  try {
    if (kind == 0) {  // blocks at arbitrary byte displacements (hindexed, struct)
      std::vector<block> blocks;
      std::vector<std::pair<block, const model*>> modelled;
      const int n = pick(0, 4);
      for (int i = 0; i < n; ++i) {
        const typed& part =
            types[static_cast<std::size_t>(pick(0, static_cast<int>(types.size()) - 1))];
        const block b{i == 0 ? count : pick(0, 3), pick(-64, 64), &part.flat};
        blocks.push_back(b);
        modelled.push_back({b, &part.expected});
      }
      flat_type built = dcuda::datatypes::concatenate(blocks, "fuzz");
      types.push_back({std::move(built), blocks_model(modelled)});
    } else if (kind == 1) {  // a vector: blocks one stride apart
      const std::int64_t stride = huge ? (std::int64_t{1} << pick(20, 62)) : pick(-40, 40);
      const std::int64_t length = pick(0, 3);
      std::vector<block> blocks;
      std::vector<std::pair<block, const model*>> modelled;
      for (std::int64_t i = 0; i < std::min<std::int64_t>(count, 64); ++i) {
        std::int64_t displacement = 0;  // as dcuda_type_hvector refuses one that overflows
        if (__builtin_mul_overflow(i, stride, &displacement)) return false;
        blocks.push_back({length, displacement, &old.flat});
        modelled.push_back({blocks.back(), &old.expected});
      }
      flat_type built = dcuda::datatypes::concatenate(blocks, "fuzz");
      types.push_back({std::move(built), blocks_model(modelled)});
    } else if (kind == 2) {  // resized
      const std::int64_t lb = pick(-32, 32);
      const std::int64_t extent = huge ? (std::int64_t{1} << pick(20, 61)) : pick(0, 48);
      typed t{dcuda::datatypes::resized(old.flat, lb, extent), old.expected};
      t.expected.lb = lb;
      t.expected.ub = lb + extent;
      types.push_back(std::move(t));
    } else {  // a subarray of one to three dimensions, C or Fortran order
      const int dimensions = pick(1, 3);
      std::vector<std::int64_t> sizes, subsizes, starts;
      for (int d = 0; d < dimensions; ++d) {
        sizes.push_back(pick(1, 4));
        subsizes.push_back(pick(0, static_cast<int>(sizes.back())));
        starts.push_back(pick(0, static_cast<int>(sizes.back() - subsizes.back())));
      }
      const bool fortran = pick(0, 1) == 1;
      flat_type built =
          dcuda::datatypes::subarray(sizes, subsizes, starts, fortran, old.flat, "fuzz");
      // The model: each element of the subarray in storage order, at its place in the array.
      model m;
      std::int64_t elements = 1;
      for (std::int64_t s : subsizes) elements *= s;
      m.exact = old.expected.exact;
      for (std::int64_t e = 0; e < elements && m.exact; ++e) {
        std::vector<std::int64_t> index(static_cast<std::size_t>(dimensions));
        std::int64_t rest = e;
        for (int k = 0; k < dimensions; ++k) {
          const auto d = static_cast<std::size_t>(fortran ? k : dimensions - 1 - k);
          index[d] = rest % subsizes[d];
          rest /= subsizes[d];
        }
        std::int64_t linear = 0;
        for (int k = 0; k < dimensions; ++k) {
          const auto d = static_cast<std::size_t>(fortran ? dimensions - 1 - k : k);
          linear = linear * sizes[d] + starts[d] + index[d];
        }
        for (std::int64_t byte : old.expected.bytes) {
          m.bytes.push_back(linear * old.flat.extent + byte);
        }
        if (m.bytes.size() > model_limit) m.exact = false;
      }
      if (!m.exact) m.bytes.clear();
      std::int64_t all = 1;
      for (std::int64_t s : sizes) all *= s;
      m.ub = all * old.flat.extent;
      types.push_back({std::move(built), std::move(m)});
    }
  } catch (const dcuda::runtime::error& refusal) {
    if (refusal.code() != DCUDA_ERROR_INVALID_ARGUMENT) violated("a refusal with another code");
    return false;
  }
  return true;
}

std::vector<std::int64_t> model_bytes(const model& m, std::int64_t extent, int count) {
  std::vector<std::int64_t> bytes;
  for (int e = 0; e < count; ++e) {
    for (std::int64_t b : m.bytes) bytes.push_back(e * extent + b);
  }
  return bytes;
}

void check(const typed& t) {
  const flat_type& f = t.flat;
  std::int64_t total = 0;
  for (const auto& r : f.runs) {
    if (r.length <= 0) violated("a run of no bytes");
    total += r.length;
  }
  if (total != f.size) violated("the runs' bytes are not the size");
  if (t.expected.exact) {
    if (static_cast<std::int64_t>(t.expected.bytes.size()) != f.size) violated("size");
    if (t.expected.lb != f.lb || t.expected.ub - t.expected.lb != f.extent) violated("bounds");
  }
  if (f.size > (1 << 12)) return;  // the walk below lists every byte
  const dcuda::datatypes::built_layout built = dcuda::datatypes::build_layout(f);
  const dcuda::protocol::type_layout& layout = built.layout;
  for (int count = 1; count <= 4; ++count) {
    // The typed calls refuse a count whose range does not fit (check_typed_span): only the others
    // are walked.
    std::int64_t low = 0, high = 0;
    if (!dcuda::protocol::typed_range(layout, static_cast<std::uint64_t>(count), low, high)) {
      continue;
    }
    std::vector<std::int64_t> walked;
    const auto packed =
        dcuda::protocol::contiguous_layout(static_cast<std::uint64_t>(count) * layout.size);
    dcuda::protocol::for_each_piece(layout, packed, 0, packed.size,
                                    [&](std::int64_t from, std::int64_t to, std::uint64_t bytes) {
                                      if (to != static_cast<std::int64_t>(walked.size())) {
                                        violated("pieces out of packed order");
                                      }
                                      for (std::uint64_t k = 0; k < bytes; ++k) {
                                        walked.push_back(from + static_cast<std::int64_t>(k));
                                      }
                                    });
    if (walked.size() != packed.size) violated("the walk's bytes");
    for (std::uint64_t p = 0; p < packed.size; p += 7) {
      if (dcuda::protocol::offset_of(layout, dcuda::protocol::cursor_at(layout, p)) != walked[p]) {
        violated("a cursor found another byte than the walk");
      }
    }
    // A lane's steps through a copy: from a few starts, by a few strides, both ways of stepping.
    for (const std::uint64_t stride : {std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{256}}) {
      const dcuda::protocol::cursor_step step = dcuda::protocol::step_of(layout, stride);
      for (std::uint64_t start = 0; start < packed.size && start < 3; ++start) {
        dcuda::protocol::type_cursor far = dcuda::protocol::cursor_at(layout, start);
        dcuda::protocol::type_cursor stepped = far;
        for (std::uint64_t p = start; p < packed.size; p += stride) {
          if (dcuda::protocol::offset_of(layout, far) != walked[p] ||
              dcuda::protocol::offset_of(layout, stepped) != walked[p]) {
            violated("a stepped cursor found another byte than the walk");
          }
          if (p + stride >= packed.size) break;
          dcuda::protocol::advance_by(layout, far, stride);
          dcuda::protocol::step_cursor(layout, stepped, step);
        }
      }
    }
    if (t.expected.exact && walked != model_bytes(t.expected, f.extent, count)) {
      violated("the walk's bytes are not the model's");
    }
    if (!walked.empty()) {
      const auto [min, max] = std::minmax_element(walked.begin(), walked.end());
      if (low != *min || high != *max + 1) violated("the typed range");
    }
    std::sort(walked.begin(), walked.end());
    const bool twice = std::adjacent_find(walked.begin(), walked.end()) != walked.end();
    if (dcuda::protocol::covers_a_byte_twice(layout, static_cast<std::uint64_t>(count)) != twice) {
      violated("the overlap flag or period");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcuda_fuzz::input in(data, size);
  std::vector<typed> types;
  for (const std::int64_t bytes : {1, 4, 8}) {
    model m;
    for (std::int64_t b = 0; b < bytes; ++b) m.bytes.push_back(b);
    m.ub = bytes;
    types.push_back({dcuda::datatypes::predefined(bytes), m});
  }
  const int steps = 1 + in.take<std::uint8_t>() % 6;
  for (int s = 0; s < steps && in.remaining() > 0; ++s) {
    if (step(in, types)) check(types.back());
  }
  return 0;
}
