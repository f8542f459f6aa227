// A datatype on the host: its type map flattened into runs of contiguous bytes, in type-map
// order, with MPI's bounds. Every constructor of include/dcuda/datatype.h builds one from the
// flat types of its parts; commit turns it into a protocol::type_layout (layout_builder.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dcuda::datatypes {

// `length` contiguous bytes at `displacement` from the element's origin.
struct run {
  std::int64_t displacement;
  std::int64_t length;
};

struct flat_type {
  std::vector<run> runs;  // type-map order; adjacent runs that continue each other merged
  std::int64_t size = 0;  // sum of the runs' lengths
  std::int64_t lb = 0;    // lower bound and extent, as MPI defines them (no alignment padding)
  std::int64_t extent = 0;
  std::int64_t true_lb = 0;  // bytes touched: [true_lb, true_ub)
  std::int64_t true_ub = 0;
};

// Most runs one type may flatten to (a type of more is refused by the constructor that would
// build it, naming the count): 16 bytes each on the host and again on every GPU that uses it.
inline constexpr std::int64_t max_runs = std::int64_t{1} << 24;

// At most how many runs `copies` copies of `old` flatten to (saturating at max_runs + 1): what a
// constructor checks before it builds anything, so that a type too large is refused at once
// rather than after its blocks have filled the memory.
std::int64_t runs_for(const flat_type& old, std::int64_t copies);

// Refuses a type of `runs` runs (more than max_runs), naming `call`.
void check_run_count(std::int64_t runs, const char* call);

// A predefined type of `bytes` bytes.
flat_type predefined(std::int64_t bytes);

// One block of a constructor: `copies` copies of `old`, the first at `displacement` bytes, each
// next one old.extent further.
struct block {
  std::int64_t copies;
  std::int64_t displacement;
  const flat_type* old;
};

// The type whose type map is the blocks' copies, in order: what hvector, hindexed, struct and
// their relatives build. `call` names the constructor in errors (too many runs, a size that does
// not fit 64 bits).
flat_type concatenate(const std::vector<block>& blocks, const char* call);

// `old` with lb and extent set.
flat_type resized(const flat_type& old, std::int64_t lb, std::int64_t extent);

// The subarray type (dimensions as given, `fortran_order`: the first dimension contiguous).
flat_type subarray(const std::vector<std::int64_t>& sizes,
                   const std::vector<std::int64_t>& subsizes,
                   const std::vector<std::int64_t>& starts, bool fortran_order,
                   const flat_type& old, const char* call);

}  // namespace dcuda::datatypes
