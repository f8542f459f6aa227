// How a distributed array (dcuda/device/array.cuh) deals its elements to the ranks of its team
// (extension), as DASH's patterns do for dash::Array: block-cyclic, with blocked (one block per
// rank, DASH's BLOCKED) and cyclic (blocks of one element, DASH's CYCLIC) as its two ends. The
// same code on the host and the device.
//
// The elements are cut, in order, into blocks of `block` elements (the last may be short); block
// k goes to rank k % units as that rank's (k / units)-th block. A rank keeps its blocks one
// after another, so its elements are contiguous in its part: local index (k / units) * block +
// (i % block) for element i of block k.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"

namespace dcuda {

// Where an element lives: the rank of the team (its unit) and its index among that rank's
// elements.
struct element_place {
  int unit;
  std::uint64_t local;
};

class distribution {
 public:
  // `size` elements over `units` ranks in blocks of `block` elements. Valid (valid()) with
  // units > 0 and block > 0.
  DCUDA_HD static constexpr distribution block_cyclic(std::uint64_t size, int units,
                                                      std::uint64_t block) {
    return distribution(size, units, block);
  }
  // One block per rank, of ceil(size / units) elements (at least one).
  DCUDA_HD static constexpr distribution blocked(std::uint64_t size, int units) {
    const std::uint64_t per_unit =
        units > 0 ? ceiling_of(size, static_cast<std::uint64_t>(units)) : 0;
    return distribution(size, units, per_unit > 0 ? per_unit : 1);
  }
  // Blocks of one element: element i on rank i % units.
  DCUDA_HD static constexpr distribution cyclic(std::uint64_t size, int units) {
    return distribution(size, units, 1);
  }

  DCUDA_HD constexpr bool valid() const { return units_ > 0 && block_ > 0; }
  DCUDA_HD constexpr std::uint64_t size() const { return size_; }
  DCUDA_HD constexpr int units() const { return units_; }
  DCUDA_HD constexpr std::uint64_t block() const { return block_; }

  // Where element `global` (< size()) lives. This and global_of need a valid distribution.
  DCUDA_HD constexpr element_place place_of(std::uint64_t global) const {
    const std::uint64_t k = global / block_;
    return {static_cast<int>(k % unit_count()), (k / unit_count()) * block_ + global % block_};
  }
  // The element at index `local` of rank `unit`: the inverse of place_of.
  DCUDA_HD constexpr std::uint64_t global_of(int unit, std::uint64_t local) const {
    const std::uint64_t k = (local / block_) * unit_count() + static_cast<std::uint64_t>(unit);
    return k * block_ + local % block_;
  }
  // How many elements rank `unit` holds.
  DCUDA_HD constexpr std::uint64_t local_size(int unit) const {
    if (!valid() || unit < 0 || unit >= units_) return 0;
    const std::uint64_t blocks = ceiling_of(size_, block_);
    const auto u = static_cast<std::uint64_t>(unit);
    if (u >= blocks) return 0;
    const std::uint64_t own_blocks = (blocks - 1 - u) / unit_count() + 1;
    const std::uint64_t last = blocks - 1;  // the only block that may be short
    // The full blocks before the last one, then the last one as it is: no product beyond size_
    // (blocks * block_ would wrap for blocks near 2^64 elements).
    return last % unit_count() == u ? (own_blocks - 1) * block_ + (size_ - last * block_)
                                    : own_blocks * block_;
  }
  // The most elements any rank holds: the size of every rank's part of a team-aligned array.
  // Rank 0 holds the first block of every round, so never fewer than another rank.
  DCUDA_HD constexpr std::uint64_t largest_local_size() const { return local_size(0); }
  // How many elements from `global` (< size()) on lie one after another in the same rank's part:
  // to the end of the block (of the array, with one rank); what one get or put moves.
  DCUDA_HD constexpr std::uint64_t contiguous_from(std::uint64_t global) const {
    const std::uint64_t to_end = size_ - global;
    if (units_ == 1) return to_end;
    const std::uint64_t to_block_end = block_ - global % block_;
    return to_block_end < to_end ? to_block_end : to_end;
  }

 private:
  DCUDA_HD constexpr distribution(std::uint64_t size, int units, std::uint64_t block)
      : size_(size), units_(units), block_(block) {}
  DCUDA_HD constexpr std::uint64_t unit_count() const { return static_cast<std::uint64_t>(units_); }
  // ceil(a / b) for b > 0, without a + b - 1 (which wraps near 2^64).
  DCUDA_HD static constexpr std::uint64_t ceiling_of(std::uint64_t a, std::uint64_t b) {
    return a / b + (a % b != 0 ? 1 : 0);
  }

  std::uint64_t size_;
  int units_;
  std::uint64_t block_;
};

}  // namespace dcuda
