#include "datatypes/flat_type.h"

#include <algorithm>
#include <string>

#include "runtime/error.h"

namespace dcuda::datatypes {
namespace {

// Every displacement and bound of a type stays within +-2^62, so that the typed calls' range
// arithmetic (protocol::typed_range) and the sums below cannot overflow.
constexpr std::int64_t max_magnitude = std::int64_t{1} << 62;

[[noreturn]] void refuse(const char* call, const std::string& what) {
  throw runtime::error(DCUDA_ERROR_INVALID_ARGUMENT, std::string(call) + ": " + what);
}

std::int64_t checked_product(std::int64_t a, std::int64_t b, const char* call, const char* what) {
  std::int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result) || result > max_magnitude || result < -max_magnitude) {
    refuse(call, std::string(what) + " does not fit 62 bits (" + std::to_string(a) + " x " +
                     std::to_string(b) + ")");
  }
  return result;
}

std::int64_t checked_sum(std::int64_t a, std::int64_t b, const char* call, const char* what) {
  std::int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result) || result > max_magnitude || result < -max_magnitude) {
    refuse(call, std::string(what) + " does not fit 62 bits (" + std::to_string(a) + " + " +
                     std::to_string(b) + ")");
  }
  return result;
}

// One run of the old type covering exactly its extent: its copies continue each other, so a
// block of them is one run.
bool dense(const flat_type& t) {
  return t.runs.size() == 1 && t.runs[0].displacement == t.lb && t.runs[0].length == t.extent;
}

void append(std::vector<run>& runs, std::int64_t displacement, std::int64_t length) {
  if (length == 0) return;
  if (!runs.empty() && runs.back().displacement + runs.back().length == displacement) {
    runs.back().length += length;
    return;
  }
  runs.push_back({displacement, length});
}

}  // namespace

std::int64_t runs_for(const flat_type& old, std::int64_t copies) {
  if (copies == 0 || old.size == 0) return 0;
  if (dense(old)) return 1;
  const auto runs = static_cast<std::int64_t>(old.runs.size());
  return copies > (max_runs + 1) / runs ? max_runs + 1 : copies * runs;
}

void check_run_count(std::int64_t runs, const char* call) {
  if (runs > max_runs) {
    refuse(call, "the type flattens to " +
                     (runs == max_runs + 1 ? std::string("more than ") + std::to_string(max_runs)
                                           : std::to_string(runs)) +
                     " runs of contiguous bytes; a type may have at most " +
                     std::to_string(max_runs));
  }
}

flat_type predefined(std::int64_t bytes) {
  flat_type t;
  t.runs.push_back({0, bytes});
  t.size = bytes;
  t.extent = bytes;
  t.true_ub = bytes;
  return t;
}

flat_type concatenate(const std::vector<block>& blocks, const char* call) {
  flat_type out;
  bool bounded = false;  // some block has copies: lb and ub come from the blocks
  bool touched = false;  // some block has data: true_lb and true_ub come from the blocks
  std::int64_t ub = 0;
  std::int64_t runs_needed = 0;
  for (const block& b : blocks) {
    if (b.copies == 0) continue;
    const flat_type& old = *b.old;
    // The last copy's origin; every bound below is one of these plus a bound of `old`.
    const std::int64_t last = checked_sum(
        b.displacement, checked_product(b.copies - 1, old.extent, call, "a block's span"), call,
        "a block's end");
    const std::int64_t block_lb = checked_sum(b.displacement, old.lb, call, "a lower bound");
    const std::int64_t block_ub = checked_sum(
        last, checked_sum(old.lb, old.extent, call, "an upper bound"), call, "an upper bound");
    out.lb = bounded ? std::min(out.lb, block_lb) : block_lb;
    ub = bounded ? std::max(ub, block_ub) : block_ub;
    bounded = true;
    if (old.size == 0) continue;
    const std::int64_t block_true_lb = checked_sum(b.displacement, old.true_lb, call, "a bound");
    const std::int64_t block_true_ub = checked_sum(last, old.true_ub, call, "a bound");
    out.true_lb = touched ? std::min(out.true_lb, block_true_lb) : block_true_lb;
    out.true_ub = touched ? std::max(out.true_ub, block_true_ub) : block_true_ub;
    touched = true;
    out.size = checked_sum(out.size, checked_product(b.copies, old.size, call, "the size"), call,
                           "the size");
    runs_needed = checked_sum(
        runs_needed,
        dense(old) ? 1
                   : checked_product(b.copies, static_cast<std::int64_t>(old.runs.size()), call,
                                     "the number of runs"),
        call, "the number of runs");
  }
  check_run_count(runs_needed, call);
  out.extent = ub - out.lb;
  out.runs.reserve(static_cast<std::size_t>(runs_needed));
  for (const block& b : blocks) {
    const flat_type& old = *b.old;
    if (b.copies == 0 || old.size == 0) continue;
    if (dense(old)) {
      append(out.runs, b.displacement + old.lb, b.copies * old.extent);
      continue;
    }
    for (std::int64_t copy = 0; copy < b.copies; ++copy) {
      const std::int64_t origin = b.displacement + copy * old.extent;
      for (const run& r : old.runs) append(out.runs, origin + r.displacement, r.length);
    }
  }
  return out;
}

flat_type resized(const flat_type& old, std::int64_t lb, std::int64_t extent) {
  flat_type t = old;
  t.lb = lb;
  t.extent = extent;
  return t;
}

flat_type subarray(const std::vector<std::int64_t>& sizes,
                   const std::vector<std::int64_t>& subsizes,
                   const std::vector<std::int64_t>& starts, bool fortran_order,
                   const flat_type& old, const char* call) {
  const std::size_t dimensions = sizes.size();
  // Dimension `d` in the order C gives them: the last one contiguous.
  const auto in_c_order = [&](const std::vector<std::int64_t>& values, std::size_t d) {
    return fortran_order ? values[dimensions - 1 - d] : values[d];
  };
  // Byte strides of each dimension in the whole array.
  std::vector<std::int64_t> strides(dimensions);
  strides[dimensions - 1] = old.extent;
  for (std::size_t d = dimensions - 1; d > 0; --d) {
    strides[d - 1] = checked_product(strides[d], in_c_order(sizes, d), call, "the array's size");
  }
  const std::int64_t array_bytes =
      checked_product(strides[0], in_c_order(sizes, 0), call, "the array's size");
  std::int64_t runs = runs_for(old, in_c_order(subsizes, dimensions - 1));
  for (std::size_t d = 0; d + 1 < dimensions; ++d) {
    const std::int64_t rows = in_c_order(subsizes, d);
    runs = rows != 0 && runs > (max_runs + 1) / rows ? max_runs + 1 : runs * rows;
  }
  check_run_count(runs, call);
  // Innermost dimension first: its elements are copies of `old`; each outer dimension places
  // copies of the type built so far at its own stride.
  flat_type inner = concatenate({{in_c_order(subsizes, dimensions - 1),
                                  checked_product(in_c_order(starts, dimensions - 1),
                                                  strides[dimensions - 1], call, "a start"),
                                  &old}},
                                call);
  for (std::size_t d = dimensions - 1; d > 0; --d) {
    const std::size_t outer = d - 1;
    std::vector<block> rows;
    rows.reserve(static_cast<std::size_t>(in_c_order(subsizes, outer)));
    for (std::int64_t i = 0; i < in_c_order(subsizes, outer); ++i) {
      rows.push_back(
          {1, checked_product(in_c_order(starts, outer) + i, strides[outer], call, "a start"),
           &inner});
    }
    inner = concatenate(rows, call);
  }
  return resized(inner, 0, array_bytes);
}

}  // namespace dcuda::datatypes
