// A buddy allocator over one segment of 2^max_order bytes, as DART-CUDA carves each unit's
// local-global allocations from one segment registered up front: an allocation then needs no
// registration and no exchange of IPC handles, only offsets. Blocks are powers of two from
// 2^min_order bytes to the whole segment. A request takes the smallest block that holds it,
// splitting larger ones in two buddies on the way down; a freed block merges with its buddy
// whenever that is free too, so any aligned free region is always one block again.
//
// Bookkeeping, one byte per node of the complete binary tree over the smallest blocks (node 1 is
// the segment, node n has children 2n and 2n+1): the order of the largest free block in the
// node's subtree, counted from the smallest (1: one smallest block; 0: nothing free). Allocation
// walks down from the root, freeing walks up from the block's first smallest block, both in
// max_order - min_order steps. The nodes live wherever the caller puts them (host or device
// memory); the heap is not thread-safe: its owner serialises the calls.
//
// On the GPU every read of a node is a round trip to L2, so the walks read as few as they can
// (docs/design.md): allocation reads a node's two children together, one round trip per level
// down, and keeps the siblings it passed in registers, so that the way back up only writes;
// freeing reads the nodes of its way up and their siblings walk_batch levels per round trip
// (the walk writes neither before it reads them) and stops where an ancestor keeps its value.
//
// Invariant: below a node that is wholly free or allocated as one block, every node holds its
// wholly-free value. So the first node on the way up from an allocation's first smallest block
// that holds 0 is the allocation itself.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

enum class buddy_status : std::uint8_t {
  ok,
  too_large,        // more bytes than the whole segment
  exhausted,        // no free block large enough (the free bytes may be, but in pieces)
  not_allocated,    // free: no allocation covers the offset (never allocated, or freed already)
  inside_block,     // free: the offset lies inside an allocation, not at its first byte
  outside_segment,  // free: the offset is past the segment
};

struct buddy_allocation {
  buddy_status status;
  std::uint64_t offset;  // first byte in the segment
  std::uint64_t bytes;   // the block's size: the request rounded up to a power of two
};

// The bytes of bookkeeping a heap of blocks from 2^min_order to 2^max_order bytes needs.
DCUDA_HD constexpr std::uint64_t buddy_node_bytes(int min_order, int max_order) {
  return std::uint64_t{1} << (max_order - min_order + 1);
}

// The smallest order whose block holds `bytes` (0 for 0 and 1 byte; 64 beyond 2^63): one count
// of leading zeros, where a loop over the orders would cost the allocation a step per order.
DCUDA_HD constexpr int buddy_order_of(std::uint64_t bytes) {
  if (bytes <= 1) return 0;
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(bytes - 1));
#else
  return 64 - __builtin_clzll(bytes - 1);
#endif
}

class buddy_heap {
 public:
  // Blocks of 2^min_order to 2^max_order bytes (0 <= min_order <= max_order < 64, at most 31
  // levels); `nodes` holds buddy_node_bytes(min_order, max_order) bytes. The whole segment free.
  DCUDA_HD buddy_heap(std::uint8_t* nodes, int min_order, int max_order)
      : buddy_heap(nodes, min_order, max_order, formatted) {
    format(nodes, min_order, max_order);
  }

  // As above, over nodes that format() has filled and no heap has used since: touches no node,
  // so that the host can build a heap whose bookkeeping lives in device memory.
  struct formatted_t {};
  static constexpr formatted_t formatted{};
  DCUDA_HD buddy_heap(std::uint8_t* nodes, int min_order, int max_order, formatted_t)
      : nodes_(nodes),
        last_node_(buddy_node_bytes(min_order, max_order) - 1),
        min_order_(min_order),
        max_order_(max_order) {}

  // Writes the bookkeeping of a wholly free segment into `nodes`.
  DCUDA_HD static void format(std::uint8_t* nodes, int min_order, int max_order) {
    const int levels = max_order - min_order + 1;
    nodes[0] = 0;  // no node; a free's batched reads may reach it past the root
    for (int depth = 0; depth < levels; ++depth) {
      const std::uint64_t first = std::uint64_t{1} << depth;
      for (std::uint64_t n = first; n < 2 * first; ++n) {
        nodes[n] = static_cast<std::uint8_t>(levels - depth);
      }
    }
  }

  DCUDA_HD std::uint64_t capacity() const { return std::uint64_t{1} << max_order_; }
  DCUDA_HD std::uint64_t smallest_block() const { return std::uint64_t{1} << min_order_; }
  DCUDA_HD std::uint64_t bytes_in_use() const { return in_use_; }
  DCUDA_HD std::uint64_t allocations() const { return allocations_; }
  // The largest block a request could get now.
  DCUDA_HD std::uint64_t largest_free() const {
    return node(1) == 0 ? 0 : std::uint64_t{1} << (min_order_ + node(1) - 1);
  }

  // A block of at least `bytes` (0 bytes: the smallest block), aligned to its size.
  DCUDA_HD buddy_allocation allocate(std::uint64_t bytes) {
    const int fitting = buddy_order_of(bytes);
    const int order = fitting < min_order_ ? min_order_ : fitting;
    if (order > max_order_) return {buddy_status::too_large, 0, 0};
    const auto wanted = static_cast<std::uint8_t>(order - min_order_ + 1);
    if (node(1) < wanted) return {buddy_status::exhausted, 0, 0};
    std::uint64_t n = 1;
    int depth = 0;
    node_value_stack passed;  // the sibling of every node on the way down, deepest on top
    // Down to the depth of blocks of the order. Of two children that both fit, the one whose
    // largest free block is smaller: the large free blocks stay whole for large requests.
    while (whole(depth) != wanted) {
      const std::uint8_t left = node(2 * n);
      const std::uint8_t right = node(2 * n + 1);
      const bool take_left = left >= wanted && (right < wanted || left <= right);
      passed.push(take_left ? right : left);
      n = 2 * n + (take_left ? 0 : 1);
      ++depth;
    }
    const std::uint64_t first = (n - (std::uint64_t{1} << depth)) << order;
    std::uint8_t value = 0;
    node(n) = value;
    while (n > 1) {
      value = parent_value(value, passed.pop(), depth);
      n /= 2;
      --depth;
      node(n) = value;
    }
    const std::uint64_t block = std::uint64_t{1} << order;
    in_use_ += block;
    ++allocations_;
    return {buddy_status::ok, first, block};
  }

  // Frees the allocation that starts at `offset`; `freed` (when given) gets its size.
  DCUDA_HD buddy_status release(std::uint64_t offset, std::uint64_t* freed = nullptr) {
    if (offset >= capacity()) return buddy_status::outside_segment;
    int depth = levels() - 1;
    std::uint64_t n = (std::uint64_t{1} << depth) + (offset >> min_order_);
    std::uint64_t block = 0;         // the allocation's size, once the walk has met it
    std::uint8_t value = 0;          // what the walk last wrote into node 2n or 2n + 1
    std::uint8_t sibling_below = 0;  // that node's sibling
    for (;;) {
      // Node n and walk_batch - 1 ancestors with their siblings in one round trip. Past the root
      // the indices fall to nodes 0 and 1, which exist; the walk stops before it uses them.
      std::uint8_t own[walk_batch];
      std::uint8_t sibling[walk_batch];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int i = 0; i < walk_batch; ++i) {
        own[i] = node(n >> i);
        sibling[i] = node((n >> i) ^ 1u);
      }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int i = 0; i < walk_batch; ++i) {
        if (block == 0) {
          if (own[i] == 0) {  // the first 0 on the way up is the allocation (the invariant)
            const int order = max_order_ - depth;
            if (((n - (std::uint64_t{1} << depth)) << order) != offset) {
              return buddy_status::inside_block;
            }
            block = std::uint64_t{1} << order;
            value = whole(depth);
            node(n) = value;
          } else if (depth == 0) {
            return buddy_status::not_allocated;
          }
        } else {
          value = parent_value(value, sibling_below, depth + 1);
          if (value == own[i]) return released(block, freed);  // so are the nodes above
          node(n) = value;
        }
        if (depth == 0) return released(block, freed);  // the root: found, as depth 0 shows
        sibling_below = sibling[i];
        n /= 2;
        --depth;
      }
    }
  }

 private:
  // Every index is at most last_node_ (all ones): the mask changes none, and lets the compiler
  // see that no access leaves the bookkeeping.
  DCUDA_HD std::uint8_t& node(std::uint64_t n) {
    return nodes_[n & last_node_];
  }
  DCUDA_HD std::uint8_t node(std::uint64_t n) const {
    return nodes_[n & last_node_];
  }
  DCUDA_HD int levels() const {
    return max_order_ - min_order_ + 1;
  }
  // What a wholly free node at `depth` holds.
  DCUDA_HD std::uint8_t whole(int depth) const {
    return static_cast<std::uint8_t>(levels() - depth);
  }
  // What a node holds given its children at `child_depth`: wholly free when both are, the larger
  // of their largest free blocks otherwise.
  DCUDA_HD std::uint8_t parent_value(std::uint8_t one, std::uint8_t other, int child_depth) const {
    const std::uint8_t child_whole = whole(child_depth);
    if (one == child_whole && other == child_whole) return whole(child_depth - 1);
    return one > other ? one : other;
  }
  DCUDA_HD buddy_status released(std::uint64_t block, std::uint64_t* freed) {
    in_use_ -= block;
    --allocations_;
    if (freed != nullptr) *freed = block;
    return buddy_status::ok;
  }

  // Levels a free reads per round trip to the nodes.
  static constexpr int walk_batch = 4;

  // Up to 31 node values (each at most 31: five bits), last in first out, in three words that
  // stay in registers: an array indexed by depth would live in local memory.
  struct node_value_stack {
    std::uint64_t low = 0;
    std::uint64_t middle = 0;
    std::uint64_t high = 0;
    DCUDA_HD void push(std::uint8_t value) {
      high = (high << 5) | (middle >> 59);
      middle = (middle << 5) | (low >> 59);
      low = (low << 5) | value;
    }
    DCUDA_HD std::uint8_t pop() {
      const auto value = static_cast<std::uint8_t>(low & 31u);
      low = (low >> 5) | (middle << 59);
      middle = (middle >> 5) | (high << 59);
      high >>= 5;
      return value;
    }
  };
  std::uint8_t* nodes_;
  std::uint64_t last_node_;  // the tree's last node: 2^levels - 1
  int min_order_;
  int max_order_;
  std::uint64_t in_use_ = 0;
  std::uint64_t allocations_ = 0;
};

}  // namespace dcuda::protocol
