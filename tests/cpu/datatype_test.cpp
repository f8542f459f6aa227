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
#include "datatype_models.h"
#include "runtime/error.h"
#include "test_main.h"

using namespace dcuda;

namespace {

using namespace datatype_models;

// The bytes the layout's walk visits for packed bytes [0, total), by for_each_piece against a
// contiguous target.
std::vector<std::int64_t> walked_bytes(const protocol::type_layout& t, std::uint64_t total) {
  const protocol::type_layout contiguous = protocol::contiguous_layout(total);
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
  // Whether `count` elements cover a byte twice, as the model lists them, for counts on both
  // sides of the overlap period the layout found.
  const auto twice_in = [&](std::uint64_t count) {
    std::vector<std::int64_t> sorted = expected_bytes(m, static_cast<int>(count));
    std::sort(sorted.begin(), sorted.end());
    return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  };
  DCUDA_CHECK_EQ((t.flags & protocol::layout_overlaps) != 0, twice_in(1));
  for (std::uint64_t count : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3},
                              std::uint64_t{5}, t.overlap_period, t.overlap_period + 1}) {
    if (count == 0 || count > 64) continue;
    DCUDA_CHECK_EQ(protocol::covers_a_byte_twice(t, count), twice_in(count));
  }
  DCUDA_CHECK_EQ(t.extent % t.unit, 0);
  if (m.bytes.empty()) return;
  // The unit divides every run: each piece of one element copied to a contiguous buffer.
  const protocol::type_layout packed = protocol::contiguous_layout(t.size);
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

// A copy's lanes step their cursors by a warp's stride of words (advance_by, and step_cursor
// for a fixed step): from any packed offset, by any distance, across runs and elements, a cursor
// must land where the model says.
DCUDA_TEST(datatype_cursor_steps_any_distance_to_the_models_byte) {
  random_types types(2024);
  int steps_checked = 0;
  for (int i = 0; i < 300; ++i) {
    const built b = types.make(1 + i % 3);
    dcuda_datatype committed = b.handle;
    dcuda_type_commit(&committed);
    const auto layout = datatypes::type_registry::instance().layout(b.handle, "datatype_test");
    const protocol::type_layout& t = layout->layout;
    const std::vector<std::int64_t> bytes = expected_bytes(b.expected, 5);
    if (bytes.empty()) {
      free_type(b.handle);
      continue;
    }
    const std::uint64_t total = bytes.size();
    for (const std::uint64_t distance :
         {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{16}, std::uint64_t{512},
          t.size == 0 ? 1 : t.size, 1 + static_cast<std::uint64_t>(i) % total}) {
      std::uint64_t at = static_cast<std::uint64_t>(i * 7) % total;
      protocol::type_cursor cursor = protocol::cursor_at(t, at);
      protocol::type_cursor stepped = cursor;  // by step_cursor, the fixed step's way
      const protocol::cursor_step step = protocol::step_of(t, distance);
      while (true) {
        DCUDA_CHECK_EQ(protocol::offset_of(t, cursor), bytes[at]);
        DCUDA_CHECK_EQ(protocol::offset_of(t, stepped), bytes[at]);
        ++steps_checked;
        if (at + distance >= total) break;
        protocol::advance_by(t, cursor, distance);
        protocol::step_cursor(t, stepped, step);
        at += distance;
      }
    }
    free_type(b.handle);
  }
  DCUDA_CHECK(steps_checked > 10000);
}

// A listed layout spanning many run index entries: runs far shorter than an entry (many runs
// per entry), and far longer (one run over several), in random order. Every packed byte is found
// in its run through the index, as a search of all runs finds it.
DCUDA_TEST(datatype_run_index_finds_every_bytes_run) {
  std::mt19937 random(7);
  std::vector<int> lengths;
  std::vector<std::int64_t> displacements;
  std::int64_t at = 0;
  for (int i = 0; i < 400; ++i) {
    const int length =
        i % 5 == 0 ? 1 + static_cast<int>(random() % 20000) : 1 + static_cast<int>(random() % 300);
    lengths.push_back(length);
    displacements.push_back(at);
    at += length + 1 + static_cast<std::int64_t>(random() % 7);  // never a stride
  }
  dcuda_datatype type{};
  dcuda_type_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                      DCUDA_BYTE, &type);
  dcuda_type_commit(&type);
  const auto layout = datatypes::type_registry::instance().layout(type, "datatype_test");
  const protocol::type_layout& t = layout->layout;
  DCUDA_CHECK(t.kind == protocol::layout_kind::listed);
  DCUDA_CHECK(t.run_index != nullptr);
  DCUDA_CHECK(t.size > 20 * protocol::run_index_bytes);
  std::uint64_t checked = 0;
  for (std::uint64_t packed = 0; packed < t.size; packed += 1 + packed % 97) {
    const std::uint64_t run = protocol::run_holding(t, packed);
    DCUDA_CHECK_EQ(run, protocol::run_holding_between(t, packed, 0, t.run_count));
    DCUDA_CHECK(t.run_starts[run] <= packed && packed < t.run_starts[run + 1]);
    const protocol::type_cursor cursor = protocol::cursor_at(t, packed);
    DCUDA_CHECK_EQ(protocol::offset_of(t, cursor),
                   displacements[run] + static_cast<std::int64_t>(packed - t.run_starts[run]));
    ++checked;
  }
  // Each entry's edges, where an off-by-one would land in the neighbouring run.
  for (std::uint64_t entry = 1; entry * protocol::run_index_bytes < t.size; ++entry) {
    for (const std::uint64_t packed :
         {entry * protocol::run_index_bytes - 1, entry * protocol::run_index_bytes}) {
      DCUDA_CHECK_EQ(protocol::run_holding(t, packed),
                     protocol::run_holding_between(t, packed, 0, t.run_count));
      ++checked;
    }
  }
  DCUDA_CHECK(checked > 2000);
  dcuda_type_free(&type);
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

DCUDA_TEST(datatype_elements_that_meet_are_found_at_their_period) {
  const auto period_of = [](dcuda_datatype type) {
    dcuda_type_commit(&type);
    const auto built = datatypes::type_registry::instance().layout(type, "datatype_test");
    const std::uint64_t period = built->layout.overlap_period;
    dcuda_type_free(&type);
    return period;
  };
  dcuda_datatype t;
  dcuda_type_resized(DCUDA_INT64, 0, 4, &t);  // 8 bytes, 4 apart: the next element meets it
  DCUDA_CHECK_EQ(period_of(t), 1u);
  dcuda_type_resized(DCUDA_INT, 0, 0, &t);  // every element in one place
  DCUDA_CHECK_EQ(period_of(t), 1u);
  const int lengths[] = {1, 1};
  const std::int64_t displacements[] = {0, 10};  // bytes 0 and 10, elements 5 apart
  dcuda_datatype pair;
  dcuda_type_hindexed(2, lengths, displacements, DCUDA_BYTE, &pair);
  dcuda_type_resized(pair, 0, 5, &t);
  dcuda_type_free(&pair);
  DCUDA_CHECK_EQ(period_of(t), 2u);  // element 2's byte 0 is element 0's byte 10
  // A transpose's column, resized to one value: n columns are the matrix, n + 1 wrap onto it.
  dcuda_datatype column;
  dcuda_type_vector(6, 1, 6, DCUDA_DOUBLE, &column);
  dcuda_type_resized(column, 0, 8, &t);
  dcuda_type_free(&column);
  DCUDA_CHECK_EQ(period_of(t), 6u);
  dcuda_type_vector(6, 1, 6, DCUDA_DOUBLE, &t);  // elements a whole extent apart never meet
  DCUDA_CHECK_EQ(period_of(t), 0u);
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
