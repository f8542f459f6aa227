// Datatypes on the CPU: every constructor and random nestings of them, flattened and committed
// (src/datatypes/), against a plain model that lists a type map byte by byte; the copy engine's
// walk (protocol/type_layout.h) against the same model; the registry's handle checks.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "datatypes/flat_type.h"
#include "datatypes/type_registry.h"
#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/type_layout.h"
#include "runtime/error.h"
#include "test_main.h"

using namespace dcuda;

namespace {

// A type as MPI defines it, without any cleverness: the displacement of every byte of its type
// map, in type-map order, and its bounds.
struct model {
  std::vector<std::int64_t> bytes;
  std::int64_t lb = 0;
  std::int64_t ub = 0;
  std::int64_t extent() const { return ub - lb; }
};

model predefined_model(std::int64_t size) {
  model m;
  for (std::int64_t b = 0; b < size; ++b) m.bytes.push_back(b);
  m.ub = size;
  return m;
}

struct model_block {
  std::int64_t copies;
  std::int64_t displacement;
  const model* old;
};

model blocks_model(const std::vector<model_block>& blocks) {
  model m;
  bool bounded = false;
  for (const model_block& b : blocks) {
    if (b.copies == 0) continue;
    for (std::int64_t c = 0; c < b.copies; ++c) {
      for (std::int64_t byte : b.old->bytes) {
        m.bytes.push_back(b.displacement + c * b.old->extent() + byte);
      }
    }
    const std::int64_t lb = b.displacement + b.old->lb;
    const std::int64_t ub = b.displacement + (b.copies - 1) * b.old->extent() + b.old->ub;
    m.lb = bounded ? std::min(m.lb, lb) : lb;
    m.ub = bounded ? std::max(m.ub, ub) : ub;
    bounded = true;
  }
  return m;
}

// Element idx (C order of the subarray's own indices) of an array stored in `order`.
model subarray_model(const std::vector<int>& sizes, const std::vector<int>& subsizes,
                     const std::vector<int>& starts, dcuda_order order, const model& old) {
  const int dimensions = static_cast<int>(sizes.size());
  model m;
  std::int64_t elements = 1;
  for (int s : subsizes) elements *= s;
  for (std::int64_t e = 0; e < elements; ++e) {
    // The e-th element of the subarray in storage order: for C the last index runs fastest.
    std::vector<int> index(static_cast<std::size_t>(dimensions));
    std::int64_t rest = e;
    for (int k = 0; k < dimensions; ++k) {
      const int d = order == DCUDA_ORDER_C ? dimensions - 1 - k : k;
      index[static_cast<std::size_t>(d)] =
          static_cast<int>(rest % subsizes[static_cast<std::size_t>(d)]);
      rest /= subsizes[static_cast<std::size_t>(d)];
    }
    std::int64_t linear = 0;
    for (int k = 0; k < dimensions; ++k) {
      const int d = order == DCUDA_ORDER_C ? k : dimensions - 1 - k;
      const auto du = static_cast<std::size_t>(d);
      linear = linear * sizes[du] + starts[du] + index[du];
    }
    for (std::int64_t byte : old.bytes) m.bytes.push_back(linear * old.extent() + byte);
  }
  std::int64_t all = 1;
  for (int s : sizes) all *= s;
  m.lb = 0;
  m.ub = all * old.extent();
  return m;
}

// A type built through the public calls, with its model.
struct built {
  dcuda_datatype handle;
  model expected;
};

class random_types {
 public:
  explicit random_types(unsigned seed) : engine_(seed) {}

  built make(int depth) {
    const int kind = depth == 0 ? 8 : pick(0, 8);
    switch (kind) {
      case 0: {
        const built old = make(depth - 1);
        const int count = pick(0, 4);
        dcuda_datatype t;
        dcuda_type_contiguous(count, old.handle, &t);
        return {t, blocks_model({{count, 0, &old.expected}})};
      }
      case 1:
      case 2: {
        const built old = make(depth - 1);
        const int count = pick(0, 4);
        const int blocklength = pick(0, 3);
        dcuda_datatype t;
        std::int64_t stride_bytes = 0;
        if (kind == 1) {
          const int stride = pick(-4, 6);
          dcuda_type_vector(count, blocklength, stride, old.handle, &t);
          stride_bytes = stride * old.expected.extent();
        } else {
          stride_bytes = pick(-40, 60);
          dcuda_type_hvector(count, blocklength, stride_bytes, old.handle, &t);
        }
        std::vector<model_block> blocks;
        for (int i = 0; i < count; ++i)
          blocks.push_back({blocklength, i * stride_bytes, &old.expected});
        return {t, blocks_model(blocks)};
      }
      case 3:
      case 4:
      case 5: {
        const built old = make(depth - 1);
        const int count = pick(0, 4);
        std::vector<int> lengths, displacements;
        std::vector<std::int64_t> byte_displacements;
        const int same_length = pick(0, 3);
        for (int i = 0; i < count; ++i) {
          lengths.push_back(kind == 5 ? same_length : pick(0, 3));
          displacements.push_back(pick(-3, 8));
          byte_displacements.push_back(pick(-30, 70));
        }
        dcuda_datatype t;
        std::vector<model_block> blocks;
        for (int i = 0; i < count; ++i) {
          const auto iu = static_cast<std::size_t>(i);
          const std::int64_t displacement =
              kind == 4 ? byte_displacements[iu] : displacements[iu] * old.expected.extent();
          blocks.push_back({lengths[iu], displacement, &old.expected});
        }
        if (kind == 3)
          dcuda_type_indexed(count, lengths.data(), displacements.data(), old.handle, &t);
        if (kind == 4) {
          dcuda_type_hindexed(count, lengths.data(), byte_displacements.data(), old.handle, &t);
        }
        if (kind == 5)
          dcuda_type_indexed_block(count, same_length, displacements.data(), old.handle, &t);
        return {t, blocks_model(blocks)};
      }
      case 6: {
        const built old = make(depth - 1);
        const int dimensions = pick(1, 3);
        std::vector<int> sizes, subsizes, starts;
        for (int d = 0; d < dimensions; ++d) {
          sizes.push_back(pick(1, 4));
          subsizes.push_back(pick(0, sizes.back()));
          starts.push_back(pick(0, sizes.back() - subsizes.back()));
        }
        const dcuda_order order = pick(0, 1) == 0 ? DCUDA_ORDER_C : DCUDA_ORDER_FORTRAN;
        dcuda_datatype t;
        dcuda_type_subarray(dimensions, sizes.data(), subsizes.data(), starts.data(), order,
                            old.handle, &t);
        return {t, subarray_model(sizes, subsizes, starts, order, old.expected)};
      }
      case 7: {
        const int count = pick(0, 3);
        std::vector<built> parts;
        std::vector<int> lengths;
        std::vector<std::int64_t> displacements;
        std::vector<dcuda_datatype> handles;
        for (int i = 0; i < count; ++i) parts.push_back(make(depth - 1));
        std::vector<model_block> blocks;
        for (int i = 0; i < count; ++i) {
          lengths.push_back(pick(0, 2));
          displacements.push_back(pick(-20, 60));
          handles.push_back(parts[static_cast<std::size_t>(i)].handle);
          blocks.push_back(
              {lengths.back(), displacements.back(), &parts[static_cast<std::size_t>(i)].expected});
        }
        dcuda_datatype t;
        dcuda_type_struct(count, lengths.data(), displacements.data(), handles.data(), &t);
        return {t, blocks_model(blocks)};
      }
      default: {
        const built old = depth == 0 ? predefined() : make(depth - 1);
        if (depth == 0 || pick(0, 1) == 0) return old;
        const std::int64_t lb = pick(-16, 16);
        const std::int64_t extent = pick(0, 40);
        dcuda_datatype t;
        dcuda_type_resized(old.handle, lb, extent, &t);
        model m = old.expected;
        m.lb = lb;
        m.ub = lb + extent;
        return {t, m};
      }
    }
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(engine_); }
  built predefined() {
    const std::pair<dcuda_datatype, int> types[] = {
        {DCUDA_BYTE, 1}, {DCUDA_INT, 4}, {DCUDA_DOUBLE, 8}, {DCUDA_FLOAT, 4}};
    const auto& chosen = types[pick(0, 3)];
    return {chosen.first, predefined_model(chosen.second)};
  }
  std::mt19937 engine_;
};

// The bytes of `count` elements, in packed order, from the buffer's origin.
std::vector<std::int64_t> expected_bytes(const model& m, int count) {
  std::vector<std::int64_t> bytes;
  for (int e = 0; e < count; ++e) {
    for (std::int64_t b : m.bytes) bytes.push_back(e * m.extent() + b);
  }
  return bytes;
}

// The bytes the layout's walk visits for packed bytes [0, total), by for_each_piece against a
// contiguous target.
std::vector<std::int64_t> walked_bytes(const protocol::type_layout& t, std::uint64_t total) {
  const protocol::type_layout contiguous{total,
                                         static_cast<std::int64_t>(total),
                                         0,
                                         static_cast<std::int64_t>(total),
                                         protocol::layout_kind::strided,
                                         0,
                                         1,
                                         0,
                                         1,
                                         0,
                                         0,
                                         total,
                                         nullptr,
                                         nullptr};
  std::vector<std::int64_t> bytes;
  protocol::for_each_piece(t, contiguous, 0, total,
                           [&](std::int64_t from, std::int64_t to, std::uint64_t length) {
                             DCUDA_CHECK_EQ(to, static_cast<std::int64_t>(bytes.size()));
                             for (std::uint64_t k = 0; k < length; ++k) {
                               bytes.push_back(from + static_cast<std::int64_t>(k));
                             }
                           });
  return bytes;
}

void check_against_model(const built& b) {
  const model& m = b.expected;
  std::size_t size = 0;
  std::int64_t lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  dcuda_type_get_size(b.handle, &size);
  dcuda_type_get_extent(b.handle, &lb, &extent);
  dcuda_type_get_true_extent(b.handle, &true_lb, &true_extent);
  DCUDA_CHECK_EQ(size, m.bytes.size());
  DCUDA_CHECK_EQ(lb, m.lb);
  DCUDA_CHECK_EQ(extent, m.extent());
  if (!m.bytes.empty()) {
    const auto [low, high] = std::minmax_element(m.bytes.begin(), m.bytes.end());
    DCUDA_CHECK_EQ(true_lb, *low);
    DCUDA_CHECK_EQ(true_extent, *high + 1 - *low);
  }
  dcuda_datatype committed = b.handle;
  dcuda_type_commit(&committed);
  const auto built_layout = datatypes::type_registry::instance().layout(b.handle, "datatype_test");
  const protocol::type_layout& t = built_layout->layout;
  DCUDA_CHECK_EQ(t.size, m.bytes.size());
  std::vector<std::int64_t> sorted = m.bytes;
  std::sort(sorted.begin(), sorted.end());
  const bool twice = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  DCUDA_CHECK_EQ((t.flags & protocol::layout_overlaps) != 0, twice);
  DCUDA_CHECK_EQ(t.extent % t.unit, 0);
  if (m.bytes.empty()) return;
  // The unit divides every run: each piece of one element copied to a contiguous buffer.
  const protocol::type_layout packed{t.size,
                                     static_cast<std::int64_t>(t.size),
                                     0,
                                     static_cast<std::int64_t>(t.size),
                                     protocol::layout_kind::strided,
                                     0,
                                     1,
                                     0,
                                     1,
                                     0,
                                     0,
                                     t.size,
                                     nullptr,
                                     nullptr};
  protocol::for_each_piece(t, packed, 0, t.size,
                           [&](std::int64_t from, std::int64_t, std::uint64_t length) {
                             DCUDA_CHECK_EQ(from % t.unit, 0);
                             DCUDA_CHECK_EQ(length % t.unit, 0u);
                           });
  for (int count = 1; count <= 3; ++count) {
    const std::vector<std::int64_t> expected = expected_bytes(m, count);
    for (std::uint64_t p = 0; p < expected.size(); ++p) {
      DCUDA_CHECK_EQ(protocol::offset_of(t, protocol::cursor_at(t, p)), expected[p]);
    }
    DCUDA_CHECK(walked_bytes(t, expected.size()) == expected);
    std::int64_t low = 0, high = 0;
    DCUDA_CHECK(protocol::typed_range(t, static_cast<std::uint64_t>(count), low, high));
    const auto [min, max] = std::minmax_element(expected.begin(), expected.end());
    DCUDA_CHECK_EQ(low, *min);
    DCUDA_CHECK_EQ(high, *max + 1);
  }
}

void free_type(dcuda_datatype handle) {
  if (handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&handle);
}

}  // namespace

DCUDA_TEST(datatype_constructors_flatten_as_their_type_maps_say) {
  random_types types(12345);
  for (int i = 0; i < 400; ++i) {
    const built b = types.make(1 + i % 3);
    check_against_model(b);
    free_type(b.handle);
  }
}

DCUDA_TEST(datatype_walk_matches_two_layouts_byte_for_byte) {
  random_types types(777);
  for (int i = 0; i < 200; ++i) {
    const built a = types.make(1 + i % 3);
    const built b = types.make(1 + (i / 3) % 3);
    dcuda_datatype ca = a.handle, cb = b.handle;
    dcuda_type_commit(&ca);
    dcuda_type_commit(&cb);
    const auto la = datatypes::type_registry::instance().layout(a.handle, "datatype_test");
    const auto lb = datatypes::type_registry::instance().layout(b.handle, "datatype_test");
    const std::vector<std::int64_t> from = expected_bytes(a.expected, 3);
    const std::vector<std::int64_t> to = expected_bytes(b.expected, 3);
    const std::uint64_t total = std::min(from.size(), to.size());
    // From any packed offset to any later one, as a warp's share of a copy starts.
    const std::uint64_t begin = total == 0 ? 0 : static_cast<std::uint64_t>(i) % total;
    std::uint64_t at = begin;
    protocol::for_each_piece(la->layout, lb->layout, begin, total,
                             [&](std::int64_t source, std::int64_t target, std::uint64_t length) {
                               for (std::uint64_t k = 0; k < length; ++k, ++at) {
                                 DCUDA_CHECK_EQ(source + static_cast<std::int64_t>(k), from[at]);
                                 DCUDA_CHECK_EQ(target + static_cast<std::int64_t>(k), to[at]);
                               }
                             });
    DCUDA_CHECK_EQ(at, total);
    free_type(a.handle);
    free_type(b.handle);
  }
}

DCUDA_TEST(datatype_column_and_contiguous_types_are_strided) {
  dcuda_datatype column;  // one column of a 100 x 30 row-major matrix of doubles
  dcuda_type_vector(100, 1, 30, DCUDA_DOUBLE, &column);
  dcuda_type_commit(&column);
  const auto layout = datatypes::type_registry::instance().layout(column, "datatype_test");
  DCUDA_CHECK(layout->layout.kind == protocol::layout_kind::strided);
  DCUDA_CHECK_EQ(layout->layout.run_count, 100u);
  DCUDA_CHECK_EQ(layout->layout.run_bytes, 8u);
  DCUDA_CHECK_EQ(layout->layout.stride, 240);
  DCUDA_CHECK_EQ(layout->layout.unit, 8u);
  // A billion bytes in a row are one run, built without a step per byte.
  dcuda_datatype big;
  dcuda_type_contiguous(1 << 30, DCUDA_BYTE, &big);
  dcuda_type_commit(&big);
  const auto big_layout = datatypes::type_registry::instance().layout(big, "datatype_test");
  DCUDA_CHECK_EQ(big_layout->layout.run_count, 1u);
  DCUDA_CHECK_EQ(big_layout->layout.run_bytes, std::uint64_t{1} << 30);
  // A lower triangle (column i holds rows i..n-1 of a column-major n x n matrix) is listed.
  constexpr int n = 64;
  std::vector<int> lengths, displacements;
  for (int i = 0; i < n; ++i) {
    lengths.push_back(n - i);
    displacements.push_back(i * n + i);
  }
  dcuda_datatype triangle;
  dcuda_type_indexed(n, lengths.data(), displacements.data(), DCUDA_DOUBLE, &triangle);
  dcuda_type_commit(&triangle);
  const auto triangle_layout =
      datatypes::type_registry::instance().layout(triangle, "datatype_test");
  DCUDA_CHECK(triangle_layout->layout.kind == protocol::layout_kind::listed);
  DCUDA_CHECK_EQ(triangle_layout->layout.size, static_cast<std::uint64_t>(n * (n + 1) / 2 * 8));
  dcuda_type_free(&column);
  dcuda_type_free(&big);
  dcuda_type_free(&triangle);
  DCUDA_CHECK_EQ(column.id, 0u);
}

DCUDA_TEST(datatype_handles_are_checked) {
  auto& registry = datatypes::type_registry::instance();
  const auto message_of = [&](const std::function<void()>& body) -> std::string {
    try {
      body();
    } catch (const runtime::error& e) {
      DCUDA_CHECK_EQ(e.code(), DCUDA_ERROR_INVALID_ARGUMENT);
      return e.what();
    }
    return "no error";
  };
  dcuda_datatype pair;
  dcuda_type_contiguous(2, DCUDA_INT, &pair);
  const dcuda_datatype stale = pair;
  DCUDA_CHECK(message_of([&] {
                registry.layout(pair, "dcuda_put_typed");
              }).find("dcuda_put_typed: the datatype {id") == 0);
  DCUDA_CHECK(message_of([&] { registry.layout(pair, "x"); }).find("is not committed") !=
              std::string::npos);
  dcuda_type_free(&pair);
  DCUDA_CHECK(message_of([&] { registry.flat(stale, "x"); }).find("was freed") !=
              std::string::npos);
  // The slot is reused by the next type, under a new generation: the stale handle stays freed.
  dcuda_datatype next;
  dcuda_type_contiguous(3, DCUDA_INT, &next);
  DCUDA_CHECK_EQ(next.id, stale.id);
  DCUDA_CHECK(next.generation != stale.generation);
  DCUDA_CHECK(message_of([&] { registry.flat(stale, "x"); }).find("was freed") !=
              std::string::npos);
  const dcuda_datatype forged{next.id, next.generation + 5};
  DCUDA_CHECK(message_of([&] { registry.flat(forged, "x"); }).find("is not one dcuda created") !=
              std::string::npos);
  DCUDA_CHECK(message_of([&] {
                registry.flat({100000, 1}, "x");
              }).find("is not one dcuda created") != std::string::npos);
  DCUDA_CHECK(message_of([&] {
                registry.flat(DCUDA_DATATYPE_NULL, "x");
              }).find("DCUDA_DATATYPE_NULL") != std::string::npos);
  DCUDA_CHECK(message_of([&] {
                registry.free(DCUDA_DOUBLE, "dcuda_type_free");
              }).find("predefined") != std::string::npos);
  dcuda_type_free(&next);
}

DCUDA_TEST(datatype_too_many_runs_or_bytes_are_refused_by_name) {
  const datatypes::flat_type gap = datatypes::resized(datatypes::predefined(1), 0, 2);
  std::string message = "no error";
  try {
    datatypes::concatenate({{std::int64_t{1} << 25, 0, &gap}}, "dcuda_type_contiguous");
  } catch (const runtime::error& e) {
    message = e.what();
  }
  DCUDA_CHECK(message.find("dcuda_type_contiguous: the type flattens to 33554432 runs") == 0);
  const datatypes::flat_type huge =
      datatypes::resized(datatypes::predefined(8), 0, std::int64_t{1} << 60);
  message = "no error";
  try {
    datatypes::concatenate({{64, 0, &huge}}, "dcuda_type_vector");
  } catch (const runtime::error& e) {
    message = e.what();
  }
  DCUDA_CHECK(message.find("dcuda_type_vector: ") == 0);
  DCUDA_CHECK(message.find("does not fit") != std::string::npos);
}
