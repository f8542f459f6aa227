// libFuzzer target: the decoder of a datatype layout another process sends
// (datatypes/layout_wire.h), on arbitrary bytes: once as they are, once behind a head made valid
// for them (magic, version and a run count that fits their length), so that the checks of the
// fields behind the head see every value too.
//
// Properties: the decoder never fails on any bytes; a type it accepts is a flat type as
// flattening makes them (positive lengths adding up to its size, true bounds around its runs,
// no two adjacent runs that continue each other, every field within 2^60); build_layout makes a
// layout of it whose walk visits exactly its runs' bytes; and its encoding decodes to the same
// type, byte for byte the input where nothing was merged.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "datatypes/flat_type.h"
#include "datatypes/layout_builder.h"
#include "datatypes/layout_wire.h"
#include "dcuda/detail/protocol/type_layout.h"
#include "fuzz_input.h"

namespace {

using dcuda::datatypes::flat_type;
using dcuda_fuzz::violated;

constexpr std::int64_t max_magnitude = std::int64_t{1} << 60;

bool same(const flat_type& a, const flat_type& b) {
  if (a.runs.size() != b.runs.size()) return false;
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    if (a.runs[i].displacement != b.runs[i].displacement || a.runs[i].length != b.runs[i].length) {
      return false;
    }
  }
  return a.size == b.size && a.lb == b.lb && a.extent == b.extent && a.true_lb == b.true_lb &&
         a.true_ub == b.true_ub;
}

void check_flat(const flat_type& t) {
  if (t.runs.size() > static_cast<std::size_t>(dcuda::datatypes::max_runs)) violated("run count");
  if (t.lb < -max_magnitude || t.lb > max_magnitude || t.extent < -max_magnitude ||
      t.extent > max_magnitude) {
    violated("an accepted bound past 2^60");
  }
  std::int64_t size = 0;
  std::int64_t low = 0, high = 0;
  for (std::size_t i = 0; i < t.runs.size(); ++i) {
    const auto& r = t.runs[i];
    if (r.length <= 0 || r.length > max_magnitude) violated("an accepted length out of range");
    if (r.displacement < -max_magnitude || r.displacement > max_magnitude) {
      violated("an accepted displacement past 2^60");
    }
    if (i > 0 && t.runs[i - 1].displacement + t.runs[i - 1].length == r.displacement) {
      violated("adjacent runs that continue each other left unmerged");
    }
    size += r.length;
    low = i == 0 ? r.displacement : std::min(low, r.displacement);
    high = i == 0 ? r.displacement + r.length : std::max(high, r.displacement + r.length);
  }
  if (size != t.size) violated("the size is not the sum of the lengths");
  if (t.true_lb != low || t.true_ub != high) violated("the true bounds are not the runs'");
}

void check_layout(const flat_type& t) {
  const dcuda::datatypes::built_layout built = dcuda::datatypes::build_layout(t);
  const dcuda::protocol::type_layout& layout = built.layout;
  if (layout.size != static_cast<std::uint64_t>(t.size) || layout.run_count != t.runs.size() ||
      layout.extent != t.extent || layout.true_lb != t.true_lb || layout.true_ub != t.true_ub) {
    violated("the layout's fields are not the type's");
  }
  if (layout.extent % layout.unit != 0) violated("a unit that does not divide the extent");
  if (t.size == 0 || t.size > (1 << 12)) return;  // the walk below lists every byte
  std::vector<std::int64_t> expected;
  for (const auto& r : t.runs) {
    for (std::int64_t k = 0; k < r.length; ++k) expected.push_back(r.displacement + k);
  }
  std::vector<std::int64_t> walked;
  const auto packed = dcuda::protocol::contiguous_layout(layout.size);
  dcuda::protocol::for_each_piece(layout, packed, 0, layout.size,
                                  [&](std::int64_t from, std::int64_t to, std::uint64_t bytes) {
                                    if (to != static_cast<std::int64_t>(walked.size())) {
                                      violated("pieces out of packed order");
                                    }
                                    for (std::uint64_t k = 0; k < bytes; ++k) {
                                      walked.push_back(from + static_cast<std::int64_t>(k));
                                    }
                                  });
  if (walked != expected) violated("the walk's bytes are not the runs'");
  std::sort(expected.begin(), expected.end());
  const bool twice = std::adjacent_find(expected.begin(), expected.end()) != expected.end();
  if (dcuda::protocol::covers_a_byte_twice(layout, 1) != twice) violated("the overlap flag");
}

void decode(std::span<const std::byte> bytes) {
  std::string problem;
  const auto decoded = dcuda::datatypes::decode_layout(bytes, problem);
  if (!decoded) {
    if (problem.empty()) violated("a refusal without a problem");
    return;
  }
  check_flat(*decoded);
  check_layout(*decoded);
  const std::vector<char> encoded = dcuda::datatypes::encode_layout(*decoded);
  if (encoded.size() != dcuda::datatypes::encoded_layout_bytes(decoded->runs.size())) {
    violated("an encoding of another length than encoded_layout_bytes says");
  }
  std::string again_problem;
  const auto again =
      dcuda::datatypes::decode_layout(std::as_bytes(std::span(encoded)), again_problem);
  if (!again) violated("the encoding of an accepted type refused");
  if (!same(*again, *decoded)) violated("the encoding of an accepted type decodes to another");
  const std::size_t records = (bytes.size() - 32) / 16;
  if (decoded->runs.size() == records &&
      std::memcmp(encoded.data(), bytes.data(), bytes.size()) != 0) {
    violated("an accepted encoding without merged runs is not its type's encoding");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::span(reinterpret_cast<const std::byte*>(data), size);
  decode(bytes);
  // The same bytes after a valid head's magic and version, their run count the records they hold:
  // the lb, the extent and every record come from the input.
  if (size < 16) return 0;
  dcuda_fuzz::input in(data, size);
  const auto lb = in.take<std::int64_t>();
  const auto extent = in.take<std::int64_t>();
  const auto records = static_cast<std::int64_t>(in.remaining() / 16);
  std::vector<std::byte> framed(32 + 16 * static_cast<std::size_t>(records));
  const std::uint32_t head[2] = {0x4c595444, 1};
  std::memcpy(framed.data(), head, sizeof head);
  std::memcpy(framed.data() + 8, &records, 8);
  std::memcpy(framed.data() + 16, &lb, 8);
  std::memcpy(framed.data() + 24, &extent, 8);
  if (records > 0) std::memcpy(framed.data() + 32, data + 16, framed.size() - 32);
  decode(framed);
  return 0;
}
