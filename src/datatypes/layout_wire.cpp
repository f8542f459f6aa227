#include "datatypes/layout_wire.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "datatypes/layout_builder.h"
#include "dcuda/detail/protocol/type_layout.h"

namespace dcuda::datatypes {
namespace {

// The fields are copied as the host holds them: the format's order is the host's.
static_assert(std::endian::native == std::endian::little,
              "the layout encoding is little endian, as the host must be");

constexpr std::uint32_t magic = 0x4c595444;  // "DTYL" as the encoding's first four bytes
constexpr std::uint32_t version = 1;
constexpr std::size_t head_bytes = 32;
constexpr std::size_t record_bytes = 16;

// Every displacement, length and bound of a type from another process is at most 2^60 in
// magnitude, a quarter of what a local type may reach (flat_type.cpp): what build_layout and the
// typed calls compute from them then stays far from overflow. overlap_period adds a
// residue (< extent) to a length (<= extent), subtracts quotients of at most 2^60 and adds one to
// them; a run's end and the difference of two displacements are at most 2^61; typed_range moves
// the true bounds (<= 2^61) by at most INT64_MAX / 4 < 2^61.
constexpr std::int64_t max_magnitude = std::int64_t{1} << 60;
constexpr const char* max_magnitude_text = "2^60";

// A local type's size stays within 2^62 (flat_type.cpp): one from another process does too.
constexpr std::int64_t max_size = std::int64_t{1} << 62;

// A listed layout's run index has an entry per run_index_bytes packed bytes, so its size, not its
// runs, decides what build_layout allocates for it: held to max_runs entries, the index takes no
// more than the run tables the encoding's own length already bounds, whatever size the sender
// claims. A strided layout has no index.
constexpr std::int64_t max_listed_size =
    max_runs * static_cast<std::int64_t>(protocol::run_index_bytes);

template <typename T>
char* put(char* at, T value) {
  std::memcpy(at, &value, sizeof value);
  return at + sizeof value;
}

template <typename T>
T take(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

bool within_magnitude(std::int64_t value) {
  return value >= -max_magnitude && value <= max_magnitude;
}

std::string hex(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

std::string run_field(std::size_t index, const char* field) {
  return "runs[" + std::to_string(index) + "]." + field;
}

}  // namespace

std::size_t encoded_layout_bytes(std::size_t runs) {
  return head_bytes + record_bytes * runs;
}

std::vector<char> encode_layout(const flat_type& type) {
  std::vector<char> out(encoded_layout_bytes(type.runs.size()));
  char* at = out.data();
  at = put(at, magic);
  at = put(at, version);
  at = put(at, static_cast<std::int64_t>(type.runs.size()));
  at = put(at, type.lb);
  at = put(at, type.extent);
  for (const run& r : type.runs) {
    at = put(at, r.displacement);
    at = put(at, r.length);
  }
  return out;
}

std::optional<flat_type> decode_layout(std::span<const std::byte> bytes, std::string& problem) {
  const auto refuse = [&](std::string what) -> std::optional<flat_type> {
    problem = "the datatype layout's encoding: " + std::move(what);
    return std::nullopt;
  };
  if (bytes.size() < head_bytes) {
    return refuse("its length " + std::to_string(bytes.size()) + " bytes is shorter than its " +
                  std::to_string(head_bytes) + "-byte head");
  }
  const std::byte* at = bytes.data();
  const auto found_magic = take<std::uint32_t>(at);
  const auto found_version = take<std::uint32_t>(at + 4);
  const auto run_count = take<std::int64_t>(at + 8);
  const auto lb = take<std::int64_t>(at + 16);
  const auto extent = take<std::int64_t>(at + 24);
  if (found_magic != magic) {
    return refuse("magic " + hex(found_magic) + " is not " + hex(magic) +
                  ": not a layout encoding");
  }
  if (found_version != version) {
    return refuse("version " + std::to_string(found_version) + " is not " +
                  std::to_string(version) + ", the only one this process reads");
  }
  // Before the multiplication below, which a count from anywhere could overflow.
  if (run_count < 0 || run_count > max_runs) {
    return refuse("run_count " + std::to_string(run_count) + " is outside 0.." +
                  std::to_string(max_runs));
  }
  const std::size_t expected = encoded_layout_bytes(static_cast<std::size_t>(run_count));
  if (bytes.size() != expected) {
    return refuse("its length " + std::to_string(bytes.size()) + " bytes is not the " +
                  std::to_string(expected) + " that run_count " + std::to_string(run_count) +
                  " takes");
  }
  if (!within_magnitude(lb)) {
    return refuse("lb " + std::to_string(lb) + " exceeds " + max_magnitude_text + " in magnitude");
  }
  if (!within_magnitude(extent)) {
    return refuse("extent " + std::to_string(extent) + " exceeds " + max_magnitude_text +
                  " in magnitude");
  }

  flat_type type;
  type.lb = lb;
  type.extent = extent;
  type.runs.reserve(static_cast<std::size_t>(run_count));
  std::size_t merged_from = 0;  // the record where the last run so far begins
  for (std::size_t i = 0; i < static_cast<std::size_t>(run_count); ++i) {
    const std::byte* record = at + head_bytes + record_bytes * i;
    const auto displacement = take<std::int64_t>(record);
    const auto length = take<std::int64_t>(record + 8);
    if (length <= 0) {
      return refuse(run_field(i, "length") + " " + std::to_string(length) + " is not positive");
    }
    if (length > max_magnitude) {
      return refuse(run_field(i, "length") + " " + std::to_string(length) + " exceeds " +
                    max_magnitude_text);
    }
    if (!within_magnitude(displacement)) {
      return refuse(run_field(i, "displacement") + " " + std::to_string(displacement) +
                    " exceeds " + max_magnitude_text + " in magnitude");
    }
    if (__builtin_add_overflow(type.size, length, &type.size) || type.size > max_size) {
      return refuse("size, the sum of the lengths up to " + run_field(i, "length") +
                    ", exceeds 2^62");
    }
    // As flattening leaves a flat type, so that its encoding is what the sender's would be.
    if (!type.runs.empty() &&
        type.runs.back().displacement + type.runs.back().length == displacement) {
      run& last = type.runs.back();
      last.length += length;
      // The bound holds for the runs as decoded, not only as sent: a type accepted here encodes
      // to what a receiver accepts again.
      if (last.length > max_magnitude) {
        return refuse("runs[" + std::to_string(merged_from) + "] to runs[" + std::to_string(i) +
                      "] continue each other into one run whose length " +
                      std::to_string(last.length) + " exceeds " + max_magnitude_text);
      }
      continue;
    }
    merged_from = i;
    type.runs.push_back({displacement, length});
  }
  if (type.size > max_listed_size && !strided_runs(type.runs)) {
    return refuse("size " + std::to_string(type.size) + " exceeds " +
                  std::to_string(max_listed_size) +
                  " for runs of more than one length or stride, whose layout's run index would "
                  "need more than " +
                  std::to_string(max_runs) + " entries");
  }
  // An empty type touches nothing: its true bounds stay 0 and 0, as concatenate leaves them.
  if (!type.runs.empty()) {
    type.true_lb = type.runs[0].displacement;
    type.true_ub = type.runs[0].displacement + type.runs[0].length;
    for (const run& r : type.runs) {
      type.true_lb = std::min(type.true_lb, r.displacement);
      type.true_ub = std::max(type.true_ub, r.displacement + r.length);
    }
  }
  return type;
}

}  // namespace dcuda::datatypes
