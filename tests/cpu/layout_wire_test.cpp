// A committed type's layout as it travels to another process (datatypes/layout_wire.h): every
// constructor and random nestings of them decode to the flat type they were encoded from and
// build the same layout; the format byte for byte; every truncation and every corrupted field
// refused by name; runs that continue each other merged as flattening merges them; and the
// extremes the decoder accepts built without trouble.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "datatypes/flat_type.h"
#include "datatypes/layout_builder.h"
#include "datatypes/layout_wire.h"
#include "datatypes/type_registry.h"
#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/type_layout.h"
#include "datatype_models.h"
#include "test_main.h"

using namespace dcuda;

namespace {

using datatypes::flat_type;
using datatypes::run;

constexpr std::int64_t two_to_60 = std::int64_t{1} << 60;
constexpr std::uint32_t wire_magic = 0x4c595444;  // "DTYL"

// An encoding written field by field, least significant byte first, independently of the
// encoder: what the format says, whatever the encoder does.
class writer {
 public:
  writer& u32(std::uint32_t value) { return le(value, 4); }
  writer& i64(std::int64_t value) { return le(static_cast<std::uint64_t>(value), 8); }
  std::vector<std::byte> bytes;

 private:
  writer& le(std::uint64_t value, int width) {
    for (int b = 0; b < width; ++b) bytes.push_back(static_cast<std::byte>(value >> (8 * b)));
    return *this;
  }
};

std::vector<std::byte> encoding(std::int64_t run_count, std::int64_t lb, std::int64_t extent,
                                const std::vector<run>& runs, std::uint32_t magic = wire_magic,
                                std::uint32_t version = 1) {
  writer w;
  w.u32(magic).u32(version).i64(run_count).i64(lb).i64(extent);
  for (const run& r : runs) w.i64(r.displacement).i64(r.length);
  return w.bytes;
}

std::vector<std::byte> encoding(std::int64_t lb, std::int64_t extent,
                                const std::vector<run>& runs) {
  return encoding(static_cast<std::int64_t>(runs.size()), lb, extent, runs);
}

std::vector<std::byte> as_bytes(const std::vector<char>& encoded) {
  const auto view = std::as_bytes(std::span(encoded));
  return {view.begin(), view.end()};
}

struct decoded {
  std::optional<flat_type> type;
  std::string problem;
};

decoded decode(std::span<const std::byte> bytes) {
  decoded d;
  d.type = datatypes::decode_layout(bytes, d.problem);
  return d;
}

flat_type accepted(const std::vector<std::byte>& bytes) {
  decoded d = decode(bytes);
  if (!d.type) throw dcuda_test::failure("a valid encoding refused: " + d.problem);
  return *d.type;
}

// The problem of an encoding that must be refused; it names `field` and `value`.
void check_refused(const std::vector<std::byte>& bytes, const std::string& field,
                   const std::string& value) {
  const decoded d = decode(bytes);
  if (d.type) throw dcuda_test::failure("an invalid encoding accepted; expected " + field);
  if (d.problem.find(field) == std::string::npos || d.problem.find(value) == std::string::npos) {
    throw dcuda_test::failure("the problem \"" + d.problem + "\" does not name " + field + " " +
                              value);
  }
}

void check_same_flat(const flat_type& a, const flat_type& b) {
  DCUDA_CHECK_EQ(a.runs.size(), b.runs.size());
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    DCUDA_CHECK_EQ(a.runs[i].displacement, b.runs[i].displacement);
    DCUDA_CHECK_EQ(a.runs[i].length, b.runs[i].length);
  }
  DCUDA_CHECK_EQ(a.size, b.size);
  DCUDA_CHECK_EQ(a.lb, b.lb);
  DCUDA_CHECK_EQ(a.extent, b.extent);
  DCUDA_CHECK_EQ(a.true_lb, b.true_lb);
  DCUDA_CHECK_EQ(a.true_ub, b.true_ub);
}

void check_same_layout(const datatypes::built_layout& a, const datatypes::built_layout& b) {
  const protocol::type_layout& x = a.layout;
  const protocol::type_layout& y = b.layout;
  DCUDA_CHECK_EQ(x.size, y.size);
  DCUDA_CHECK_EQ(x.extent, y.extent);
  DCUDA_CHECK_EQ(x.true_lb, y.true_lb);
  DCUDA_CHECK_EQ(x.true_ub, y.true_ub);
  DCUDA_CHECK_EQ(static_cast<std::uint32_t>(x.kind), static_cast<std::uint32_t>(y.kind));
  DCUDA_CHECK_EQ(x.flags, y.flags);
  DCUDA_CHECK_EQ(x.unit, y.unit);
  DCUDA_CHECK_EQ(x.overlap_period, y.overlap_period);
  DCUDA_CHECK_EQ(x.run_count, y.run_count);
  if (x.kind == protocol::layout_kind::strided) {
    DCUDA_CHECK_EQ(x.first, y.first);
    DCUDA_CHECK_EQ(x.stride, y.stride);
    DCUDA_CHECK_EQ(x.run_bytes, y.run_bytes);
  }
  DCUDA_CHECK(a.displacements == b.displacements);
  DCUDA_CHECK(a.run_starts == b.run_starts);
  DCUDA_CHECK(a.run_index == b.run_index);
  DCUDA_CHECK_EQ(x.run_index == nullptr, y.run_index == nullptr);
}

// A committed type through the wire: the same flat type and the same layout as the registry's.
void check_round_trip(dcuda_datatype handle) {
  dcuda_datatype committed = handle;
  dcuda_type_commit(&committed);
  auto& registry = datatypes::type_registry::instance();
  const flat_type& original = *registry.flat(handle, "layout_wire_test");
  const std::vector<char> encoded = datatypes::encode_layout(original);
  DCUDA_CHECK_EQ(encoded.size(), datatypes::encoded_layout_bytes(original.runs.size()));
  const flat_type received = accepted(as_bytes(encoded));
  check_same_flat(received, original);
  check_same_layout(datatypes::build_layout(received),
                    *registry.layout(handle, "layout_wire_test"));
}

void free_type(dcuda_datatype handle) {
  if (handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&handle);
}

// A few types of every shape, for the tests that corrupt or cut their encodings.
std::vector<std::vector<std::byte>> sample_encodings() {
  std::vector<std::vector<std::byte>> samples;
  const flat_type byte = datatypes::predefined(1);
  const flat_type dbl = datatypes::predefined(8);
  samples.push_back(as_bytes(datatypes::encode_layout(dbl)));
  samples.push_back(as_bytes(datatypes::encode_layout(
      datatypes::concatenate({{3, 0, &dbl}, {2, 40, &dbl}, {1, -16, &dbl}}, "test"))));
  samples.push_back(as_bytes(
      datatypes::encode_layout(datatypes::resized(datatypes::concatenate({}, "test"), 4, 12))));
  const flat_type gap = datatypes::resized(byte, 0, 3);
  samples.push_back(
      as_bytes(datatypes::encode_layout(datatypes::concatenate({{5, 0, &gap}}, "t"))));
  return samples;
}

}  // namespace

DCUDA_TEST(layout_wire_every_constructor_round_trips) {
  std::vector<dcuda_datatype> types = {DCUDA_BYTE, DCUDA_INT, DCUDA_FLOAT, DCUDA_DOUBLE};
  const auto add = [&](dcuda_datatype t) {
    types.push_back(t);
    return t;
  };
  dcuda_datatype t;
  dcuda_type_contiguous(5, DCUDA_DOUBLE, &t);
  add(t);
  dcuda_type_contiguous(0, DCUDA_INT, &t);
  const dcuda_datatype empty = add(t);
  dcuda_type_vector(4, 2, 5, DCUDA_DOUBLE, &t);
  const dcuda_datatype vector = add(t);
  dcuda_type_vector(3, 1, -2, DCUDA_INT, &t);
  add(t);
  dcuda_type_hvector(3, 2, 40, DCUDA_INT, &t);
  add(t);
  const int lengths[] = {2, 0, 1};
  const int displacements[] = {0, 5, 3};
  dcuda_type_indexed(3, lengths, displacements, DCUDA_DOUBLE, &t);
  add(t);
  const int hlengths[] = {1, 3};
  const std::int64_t hdisplacements[] = {16, -8};
  dcuda_type_hindexed(2, hlengths, hdisplacements, DCUDA_INT, &t);
  add(t);
  const int block_displacements[] = {4, 0, 9};
  dcuda_type_indexed_block(3, 2, block_displacements, DCUDA_FLOAT, &t);
  add(t);
  const int sizes[] = {4, 5, 6};
  const int subsizes[] = {2, 3, 2};
  const int starts[] = {1, 2, 3};
  dcuda_type_subarray(3, sizes, subsizes, starts, DCUDA_ORDER_C, DCUDA_DOUBLE, &t);
  add(t);
  dcuda_type_subarray(3, sizes, subsizes, starts, DCUDA_ORDER_FORTRAN, DCUDA_INT, &t);
  add(t);
  const int struct_lengths[] = {2, 1, 3};
  const std::int64_t struct_displacements[] = {0, 12, 24};
  const dcuda_datatype struct_types[] = {DCUDA_INT, DCUDA_DOUBLE, vector};
  dcuda_type_struct(3, struct_lengths, struct_displacements, struct_types, &t);
  add(t);
  dcuda_type_resized(vector, -8, 100, &t);
  add(t);
  dcuda_type_resized(empty, 4, 12, &t);
  add(t);
  // A byte covered twice in one element, and a column resized to one value (elements overlap
  // from the 6th on): the overlap flag and period travel through the rebuilt layout.
  const int twice_lengths[] = {2, 2};
  const std::int64_t twice_displacements[] = {0, 4};
  dcuda_type_hindexed(2, twice_lengths, twice_displacements, DCUDA_INT, &t);
  add(t);
  dcuda_datatype column;
  dcuda_type_vector(6, 1, 6, DCUDA_DOUBLE, &column);
  dcuda_type_resized(column, 0, 8, &t);
  types.push_back(column);
  add(t);
  for (const dcuda_datatype type : types) check_round_trip(type);
  // Not vacuous: the samples hold both kinds of layout and the overlap properties.
  auto& registry = datatypes::type_registry::instance();
  DCUDA_CHECK(registry.layout(types[6], "test")->layout.kind == protocol::layout_kind::strided);
  DCUDA_CHECK(registry.layout(types[9], "test")->layout.kind == protocol::layout_kind::listed);
  DCUDA_CHECK_EQ(registry.layout(types[types.size() - 3], "test")->layout.flags,
                 std::uint32_t{protocol::layout_overlaps});
  DCUDA_CHECK_EQ(registry.layout(types.back(), "test")->layout.overlap_period, 6u);
  for (const dcuda_datatype type : types) free_type(type);
}

DCUDA_TEST(layout_wire_random_nested_types_round_trip) {
  for (const int scale : {1, 4}) {
    datatype_models::random_types types(2024u + static_cast<unsigned>(scale), scale);
    for (int i = 0; i < 300; ++i) {
      const datatype_models::built b = types.make(1 + i % 4);
      check_round_trip(b.handle);
      free_type(b.handle);
    }
  }
}

DCUDA_TEST(layout_wire_format_is_the_documented_bytes) {
  // A vector of two ints three ints apart: runs {0, 4} and {12, 4}, extent 16.
  const flat_type i32 = datatypes::predefined(4);
  const flat_type vector = datatypes::concatenate({{1, 0, &i32}, {1, 12, &i32}}, "test");
  const std::vector<std::byte> expected = encoding(0, 16, {{0, 4}, {12, 4}});
  DCUDA_CHECK_EQ(expected.size(), std::size_t{64});
  DCUDA_CHECK_EQ(datatypes::encoded_layout_bytes(2), std::size_t{64});
  DCUDA_CHECK_EQ(datatypes::encoded_layout_bytes(0), std::size_t{32});
  DCUDA_CHECK(as_bytes(datatypes::encode_layout(vector)) == expected);
  // The magic as the encoding's first bytes read.
  DCUDA_CHECK_EQ(static_cast<char>(expected[0]), 'D');
  DCUDA_CHECK_EQ(static_cast<char>(expected[1]), 'T');
  DCUDA_CHECK_EQ(static_cast<char>(expected[2]), 'Y');
  DCUDA_CHECK_EQ(static_cast<char>(expected[3]), 'L');
}

DCUDA_TEST(layout_wire_empty_type_keeps_its_bounds) {
  const flat_type received = accepted(encoding(-4, 12, {}));
  DCUDA_CHECK(received.runs.empty());
  DCUDA_CHECK_EQ(received.size, 0);
  DCUDA_CHECK_EQ(received.lb, -4);
  DCUDA_CHECK_EQ(received.extent, 12);
  // As concatenate leaves a type with no data.
  const flat_type local = datatypes::resized(datatypes::concatenate({}, "test"), -4, 12);
  check_same_flat(received, local);
  const datatypes::built_layout built = datatypes::build_layout(received);
  DCUDA_CHECK_EQ(built.layout.size, 0u);
  DCUDA_CHECK(built.run_index.empty());
}

DCUDA_TEST(layout_wire_every_truncation_is_refused) {
  int refused = 0;
  for (const std::vector<std::byte>& whole : sample_encodings()) {
    accepted(whole);
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
      check_refused({whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut)}, "length",
                    std::to_string(cut));
      ++refused;
    }
    // Bytes past the end are no better than bytes missing.
    for (std::size_t extra = 1; extra <= 17; ++extra) {
      std::vector<std::byte> longer = whole;
      longer.resize(whole.size() + extra, std::byte{0});
      check_refused(longer, "length", std::to_string(longer.size()));
      ++refused;
    }
  }
  DCUDA_CHECK(refused > 200);
}

DCUDA_TEST(layout_wire_corrupt_fields_are_refused_by_name) {
  const std::vector<run> runs = {{0, 8}, {40, 16}, {-16, 8}};
  accepted(encoding(3, -16, 72, runs));
  check_refused(encoding(3, -16, 72, runs, 0x4c595445), "magic", "0x4c595445");
  check_refused(encoding(3, -16, 72, runs, 0), "magic", "0x00000000");
  check_refused(encoding(3, -16, 72, runs, wire_magic, 2), "version", "2");
  check_refused(encoding(3, -16, 72, runs, wire_magic, 0), "version", "0");
  // A count past max_runs, negative, or one that would overflow the length it implies.
  check_refused(encoding(datatypes::max_runs + 1, -16, 72, runs), "run_count", "16777217");
  check_refused(encoding(-1, -16, 72, runs), "run_count", "-1");
  check_refused(encoding(INT64_MIN, -16, 72, runs), "run_count", std::to_string(INT64_MIN));
  check_refused(encoding(INT64_MAX, -16, 72, runs), "run_count", std::to_string(INT64_MAX));
  check_refused(encoding((std::int64_t{1} << 60) + 1, -16, 72, runs), "run_count",
                std::to_string((std::int64_t{1} << 60) + 1));
  check_refused(encoding(2, -16, 72, runs), "run_count 2", "80");
  check_refused(encoding(4, -16, 72, runs), "run_count 4", "80");
  // Lengths: zero, negative, past 2^60.
  check_refused(encoding(-16, 72, {{0, 8}, {40, 0}, {-16, 8}}), "runs[1].length", "0");
  check_refused(encoding(-16, 72, {{0, 8}, {40, -5}, {-16, 8}}), "runs[1].length", "-5");
  check_refused(encoding(-16, 72, {{0, 8}, {40, 16}, {-16, INT64_MIN}}), "runs[2].length",
                std::to_string(INT64_MIN));
  check_refused(encoding(-16, 72, {{0, two_to_60 + 1}}), "runs[0].length",
                std::to_string(two_to_60 + 1));
  check_refused(encoding(-16, 72, {{0, INT64_MAX}}), "runs[0].length", std::to_string(INT64_MAX));
  // Displacements past 2^60 either way.
  check_refused(encoding(-16, 72, {{0, 8}, {two_to_60 + 1, 8}}), "runs[1].displacement",
                std::to_string(two_to_60 + 1));
  check_refused(encoding(-16, 72, {{-two_to_60 - 1, 8}}), "runs[0].displacement",
                std::to_string(-two_to_60 - 1));
  check_refused(encoding(-16, 72, {{INT64_MIN, 8}}), "runs[0].displacement",
                std::to_string(INT64_MIN));
  // Bounds past 2^60 either way.
  check_refused(encoding(-16, two_to_60 + 1, runs), "extent", std::to_string(two_to_60 + 1));
  check_refused(encoding(-16, INT64_MIN, runs), "extent", std::to_string(INT64_MIN));
  check_refused(encoding(-16, INT64_MAX, runs), "extent", std::to_string(INT64_MAX));
  check_refused(encoding(two_to_60 + 1, 72, runs), "lb", std::to_string(two_to_60 + 1));
  check_refused(encoding(INT64_MIN, 72, runs), "lb", std::to_string(INT64_MIN));
}

DCUDA_TEST(layout_wire_sizes_past_what_a_layout_holds_are_refused) {
  // Runs of 2^60 at one place (overlapping, one stride of 0: strided): four make 2^62, the most
  // a local type reaches; a fifth is past it.
  const std::vector<run> four(4, run{0, two_to_60});
  const flat_type most = accepted(encoding(0, 8, four));
  DCUDA_CHECK_EQ(most.size, std::int64_t{1} << 62);
  const datatypes::built_layout built = datatypes::build_layout(most);
  DCUDA_CHECK(built.layout.kind == protocol::layout_kind::strided);
  DCUDA_CHECK(built.run_index.empty());
  DCUDA_CHECK_EQ(built.layout.flags, std::uint32_t{protocol::layout_overlaps});
  std::vector<run> five = four;
  five.push_back({0, two_to_60});
  check_refused(encoding(0, 8, five), "size", "runs[4].length");
  // 2^24 runs of 2^60 would add up past 2^63: refused once they pass 2^62, without overflow.
  std::vector<run> many(64, run{0, two_to_60});
  check_refused(encoding(0, 8, many), "size", "runs[4].length");

  // A listed layout's run index grows with the size: up to max_runs entries (2^36 bytes) it is
  // built, past that refused; a strided one as large has no index and is accepted.
  const std::int64_t listed_most = datatypes::max_runs * std::int64_t{4096};
  const flat_type listed = accepted(encoding(0, 8, {{0, listed_most - 1}, {two_to_60 - 8, 1}}));
  DCUDA_CHECK(!datatypes::strided_runs(listed.runs));
  check_refused(encoding(0, 8, {{0, listed_most}, {two_to_60 - 8, 1}}), "size",
                std::to_string(listed_most + 1));
  const flat_type strided = accepted(encoding(0, 8, {{0, two_to_60}, {-two_to_60, two_to_60}}));
  const datatypes::built_layout strided_built = datatypes::build_layout(strided);
  DCUDA_CHECK(strided_built.layout.kind == protocol::layout_kind::strided);
  DCUDA_CHECK_EQ(strided_built.layout.stride, -two_to_60);
  DCUDA_CHECK_EQ(strided_built.layout.size, std::uint64_t{1} << 61);
}

DCUDA_TEST(layout_wire_extremes_build_a_layout) {
  // Every field at its bound, both signs, on both kinds of layout: what build_layout computes
  // (overlap period, unit, run tables) from the most a sender may claim.
  const std::vector<std::vector<run>> shapes = {
      {{-two_to_60, two_to_60}},
      {{two_to_60, two_to_60}},
      {{-two_to_60, 1}, {two_to_60, 1}},
      {{two_to_60, 3}, {-two_to_60, 5}, {0, 1}},
      {{-two_to_60 + 1, 7}, {two_to_60 - 1, 1}, {-two_to_60, 1}},
      {{-two_to_60, two_to_60}, {-two_to_60 + 1, two_to_60}, {-two_to_60 + 2, two_to_60}},
  };
  for (const std::vector<run>& runs : shapes) {
    for (const std::int64_t lb : {-two_to_60, std::int64_t{0}, two_to_60}) {
      for (const std::int64_t extent :
           {-two_to_60, -two_to_60 + 1, std::int64_t{-1}, std::int64_t{0}, std::int64_t{1},
            std::int64_t{3}, two_to_60 - 1, two_to_60}) {
        const flat_type received = accepted(encoding(lb, extent, runs));
        const datatypes::built_layout built = datatypes::build_layout(received);
        DCUDA_CHECK_EQ(built.layout.size, static_cast<std::uint64_t>(received.size));
        DCUDA_CHECK_EQ(built.layout.run_count, received.runs.size());
        DCUDA_CHECK(received.true_lb >= -two_to_60 && received.true_ub <= 2 * two_to_60);
        // As the sender would: its re-encoding decodes to the same type.
        check_same_flat(accepted(as_bytes(datatypes::encode_layout(received))), received);
      }
    }
  }
  // A run of 2^60 bytes ending at 2^61 and one from -2^60: the true bounds span 3 * 2^60.
  const flat_type wide =
      accepted(encoding(0, 16, {{two_to_60, two_to_60}, {-two_to_60, two_to_60}}));
  DCUDA_CHECK_EQ(wide.true_lb, -two_to_60);
  DCUDA_CHECK_EQ(wide.true_ub, 2 * two_to_60);
  DCUDA_CHECK_EQ(wide.size, 2 * two_to_60);
}

DCUDA_TEST(layout_wire_runs_that_continue_each_other_are_merged) {
  // Runs in type-map order: the first three continue each other, the next two do, and so do the
  // last two ({4, 4} then {8, 4}); the order counts: {8, 4} then {4, 4} stay two runs.
  const flat_type received = accepted(
      encoding(0, 64, {{0, 4}, {4, 4}, {8, 8}, {32, 4}, {36, 4}, {20, 4}, {4, 4}, {8, 4}}));
  const std::vector<run> expected = {{0, 16}, {32, 8}, {20, 4}, {4, 8}};
  DCUDA_CHECK_EQ(received.runs.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    DCUDA_CHECK_EQ(received.runs[i].displacement, expected[i].displacement);
    DCUDA_CHECK_EQ(received.runs[i].length, expected[i].length);
  }
  DCUDA_CHECK_EQ(received.size, 36);
  DCUDA_CHECK_EQ(received.true_lb, 0);
  DCUDA_CHECK_EQ(received.true_ub, 40);
  DCUDA_CHECK_EQ(accepted(encoding(0, 16, {{8, 4}, {4, 4}})).runs.size(), std::size_t{2});
  // The same as the type the public calls build from those blocks, which flattening merges.
  const flat_type byte = datatypes::predefined(1);
  const flat_type local = datatypes::resized(
      datatypes::concatenate({{4, 0, &byte}, {4, 4, &byte}, {8, 8, &byte}}, "t"), 0, 64);
  check_same_flat(accepted(encoding(0, 64, {{0, 4}, {4, 4}, {8, 8}})), local);
  check_same_layout(datatypes::build_layout(accepted(encoding(0, 64, {{0, 4}, {4, 4}, {8, 8}}))),
                    datatypes::build_layout(local));
  // A run merged past 2^60 could not be sent on: refused, naming the runs it came from.
  check_refused(encoding(0, 8, {{0, 4}, {-two_to_60, two_to_60}, {0, 1}}), "runs[1] to runs[2]",
                std::to_string(two_to_60 + 1));
  accepted(encoding(0, 8, {{-two_to_60, two_to_60 - 1}, {-1, 1}}));
}
