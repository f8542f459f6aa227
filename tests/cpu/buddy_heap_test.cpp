// The buddy allocator (protocol/buddy_heap.h): exhaustion, coalescing, fragmentation, the
// refusals of bad frees, and random sequences against a model that tracks every smallest block
// and against bookkeeping built from scratch.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "dcuda/detail/protocol/buddy_heap.h"
#include "dcuda/detail/protocol/heap_layout.h"
#include "test_main.h"

namespace {

using dcuda::protocol::buddy_allocation;
using dcuda::protocol::buddy_heap;
using dcuda::protocol::buddy_status;

// A heap with its bookkeeping.
struct test_heap {
  test_heap(int min_order, int max_order)
      : nodes(dcuda::protocol::buddy_node_bytes(min_order, max_order)),
        heap(nodes.data(), min_order, max_order) {}
  std::vector<std::uint8_t> nodes;
  buddy_heap heap;
};

// The model: which smallest blocks are taken. With buddies merged at once, a request of 2^k
// bytes can be served exactly when some 2^k-aligned region is wholly free.
struct model {
  explicit model(std::uint64_t blocks) : taken(blocks, false) {}
  bool region_free(std::uint64_t first, std::uint64_t count) const {
    return std::none_of(taken.begin() + static_cast<std::ptrdiff_t>(first),
                        taken.begin() + static_cast<std::ptrdiff_t>(first + count),
                        [](bool t) { return t; });
  }
  // The largest aligned wholly free region, in smallest blocks (0: none).
  std::uint64_t largest_free() const {
    for (std::uint64_t count = taken.size(); count >= 1; count /= 2) {
      for (std::uint64_t first = 0; first < taken.size(); first += count) {
        if (region_free(first, count)) return count;
      }
    }
    return 0;
  }
  void mark(std::uint64_t first, std::uint64_t count, bool value) {
    for (std::uint64_t i = first; i < first + count; ++i) taken[i] = value;
  }
  std::vector<bool> taken;
};

// The bookkeeping the heap must hold, built from scratch: an allocated block's node holds 0 and
// the nodes below it their wholly free values; every other node the largest free order below it.
std::vector<std::uint8_t> expected_nodes(int min_order, int max_order,
                                         const std::vector<buddy_allocation>& live) {
  const int levels = max_order - min_order + 1;
  std::vector<std::uint8_t> nodes(dcuda::protocol::buddy_node_bytes(min_order, max_order), 0);
  std::vector<bool> allocated(nodes.size(), false);
  for (const buddy_allocation& a : live) {
    const int depth = max_order - dcuda::protocol::buddy_order_of(a.bytes);
    allocated[(std::uint64_t{1} << depth) + (a.offset / a.bytes)] = true;
  }
  for (int depth = levels - 1; depth >= 0; --depth) {
    const auto whole = static_cast<std::uint8_t>(levels - depth);
    for (std::uint64_t n = std::uint64_t{1} << depth; n < std::uint64_t{2} << depth; ++n) {
      std::uint8_t value = whole;
      if (depth < levels - 1) {
        const std::uint8_t left = nodes[2 * n];
        const std::uint8_t right = nodes[2 * n + 1];
        value = left == whole - 1 && right == whole - 1 ? whole : std::max(left, right);
      }
      nodes[n] = allocated[n] ? 0 : value;
    }
  }
  for (const buddy_allocation& a : live) {  // below an allocation: wholly free values
    const int depth = max_order - dcuda::protocol::buddy_order_of(a.bytes);
    for (int below = depth + 1; below < levels; ++below) {
      const std::uint64_t span = std::uint64_t{1} << (below - depth);
      const std::uint64_t first = ((std::uint64_t{1} << depth) + a.offset / a.bytes) * span;
      for (std::uint64_t n = first; n < first + span; ++n) {
        nodes[n] = static_cast<std::uint8_t>(levels - below);
      }
    }
  }
  return nodes;
}

}  // namespace

DCUDA_TEST(buddy_heap_hands_out_every_block_once_then_reports_exhaustion) {
  test_heap h(8, 12);  // 4 KiB of 256-byte blocks
  std::vector<std::uint64_t> offsets;
  for (int i = 0; i < 16; ++i) {
    const buddy_allocation a = h.heap.allocate(200);
    DCUDA_CHECK(a.status == buddy_status::ok);
    DCUDA_CHECK_EQ(a.bytes, 256u);
    DCUDA_CHECK_EQ(a.offset % 256, 0u);
    offsets.push_back(a.offset);
  }
  std::sort(offsets.begin(), offsets.end());
  for (int i = 0; i < 16; ++i) DCUDA_CHECK_EQ(offsets[i], static_cast<std::uint64_t>(i) * 256);
  DCUDA_CHECK_EQ(h.heap.bytes_in_use(), 4096u);
  DCUDA_CHECK_EQ(h.heap.largest_free(), 0u);
  DCUDA_CHECK(h.heap.allocate(1).status == buddy_status::exhausted);
  DCUDA_CHECK(h.heap.allocate(4097).status == buddy_status::too_large);
}

DCUDA_TEST(buddy_heap_merges_freed_buddies_back_into_the_whole_segment) {
  test_heap h(8, 12);
  std::vector<std::uint64_t> offsets;
  const std::vector<std::uint64_t> sizes{256, 512, 256, 1024, 2048};
  for (const std::uint64_t bytes : sizes) {
    const buddy_allocation a = h.heap.allocate(bytes);
    DCUDA_CHECK(a.status == buddy_status::ok);
    DCUDA_CHECK_EQ(a.bytes, bytes);
    DCUDA_CHECK_EQ(a.offset % bytes, 0u);
    offsets.push_back(a.offset);
  }
  DCUDA_CHECK_EQ(h.heap.bytes_in_use(), 4096u);
  // Freed in an order that leaves buddies apart until the last.
  for (const std::size_t i :
       {std::size_t{3}, std::size_t{0}, std::size_t{4}, std::size_t{1}, std::size_t{2}}) {
    std::uint64_t freed = 0;
    DCUDA_CHECK(h.heap.release(offsets[i], &freed) == buddy_status::ok);
    DCUDA_CHECK_EQ(freed, sizes[i]);
  }
  DCUDA_CHECK_EQ(h.heap.bytes_in_use(), 0u);
  DCUDA_CHECK_EQ(h.heap.allocations(), 0u);
  DCUDA_CHECK_EQ(h.heap.largest_free(), 4096u);
  const buddy_allocation whole = h.heap.allocate(4096);
  DCUDA_CHECK(whole.status == buddy_status::ok);
  DCUDA_CHECK_EQ(whole.offset, 0u);
}

DCUDA_TEST(buddy_heap_fragmented_free_bytes_do_not_serve_a_larger_request) {
  test_heap h(8, 12);
  std::vector<std::uint64_t> offsets;
  for (int i = 0; i < 16; ++i) offsets.push_back(h.heap.allocate(256).offset);
  std::sort(offsets.begin(), offsets.end());
  for (int i = 0; i < 16; i += 2) DCUDA_CHECK(h.heap.release(offsets[i]) == buddy_status::ok);
  // Half the segment is free, in 256-byte pieces none of which is another's buddy.
  DCUDA_CHECK_EQ(h.heap.bytes_in_use(), 2048u);
  DCUDA_CHECK_EQ(h.heap.largest_free(), 256u);
  DCUDA_CHECK(h.heap.allocate(257).status == buddy_status::exhausted);
  // Freeing one odd block merges it with its freed buddy.
  DCUDA_CHECK(h.heap.release(offsets[5]) == buddy_status::ok);
  DCUDA_CHECK_EQ(h.heap.largest_free(), 512u);
  const buddy_allocation a = h.heap.allocate(512);
  DCUDA_CHECK(a.status == buddy_status::ok);
  DCUDA_CHECK_EQ(a.offset, offsets[4]);
}

DCUDA_TEST(buddy_heap_refuses_frees_that_name_no_allocation) {
  test_heap h(8, 12);
  const buddy_allocation a = h.heap.allocate(1024);
  DCUDA_CHECK(a.status == buddy_status::ok);
  DCUDA_CHECK(h.heap.release(a.offset + 256) == buddy_status::inside_block);
  DCUDA_CHECK(h.heap.release(a.offset + 1) == buddy_status::inside_block);
  const std::uint64_t elsewhere = a.offset == 0 ? 2048 : 0;
  DCUDA_CHECK(h.heap.release(elsewhere) == buddy_status::not_allocated);
  DCUDA_CHECK(h.heap.release(4096) == buddy_status::outside_segment);
  DCUDA_CHECK(h.heap.release(a.offset) == buddy_status::ok);
  DCUDA_CHECK(h.heap.release(a.offset) == buddy_status::not_allocated);  // a second free
  DCUDA_CHECK_EQ(h.heap.bytes_in_use(), 0u);
  DCUDA_CHECK_EQ(h.heap.largest_free(), 4096u);
}

DCUDA_TEST(buddy_heap_zero_bytes_take_the_smallest_block_and_one_level_is_one_block) {
  test_heap h(6, 6);  // a segment of one 64-byte block
  const buddy_allocation a = h.heap.allocate(0);
  DCUDA_CHECK(a.status == buddy_status::ok);
  DCUDA_CHECK_EQ(a.bytes, 64u);
  DCUDA_CHECK(h.heap.allocate(0).status == buddy_status::exhausted);
  DCUDA_CHECK(h.heap.release(a.offset) == buddy_status::ok);
  DCUDA_CHECK(h.heap.allocate(65).status == buddy_status::too_large);
}

DCUDA_TEST(buddy_heap_random_sequences_match_the_model) {
  constexpr int min_order = 4;
  constexpr int max_order = 12;  // 256 smallest blocks of 16 bytes
  std::mt19937_64 random(20261129);
  for (int round = 0; round < 40; ++round) {
    test_heap h(min_order, max_order);
    model m(std::uint64_t{1} << (max_order - min_order));
    std::vector<buddy_allocation> live;
    for (int step = 0; step < 2000; ++step) {
      const bool allocate = live.empty() || random() % 100 < 55;
      if (allocate) {
        const std::uint64_t bytes = random() % (std::uint64_t{1} << (random() % (max_order + 2)));
        const int order = std::max(dcuda::protocol::buddy_order_of(bytes), min_order);
        const buddy_allocation a = h.heap.allocate(bytes);
        if (order > max_order) {
          DCUDA_CHECK(a.status == buddy_status::too_large);
          continue;
        }
        const std::uint64_t blocks = std::uint64_t{1} << (order - min_order);
        const bool fits = m.largest_free() >= blocks;
        DCUDA_CHECK_EQ(a.status == buddy_status::ok, fits);
        if (a.status != buddy_status::ok) {
          DCUDA_CHECK(a.status == buddy_status::exhausted);
          continue;
        }
        DCUDA_CHECK_EQ(a.bytes, std::uint64_t{1} << order);
        DCUDA_CHECK_EQ(a.offset % a.bytes, 0u);
        DCUDA_CHECK(a.bytes >= bytes);
        const std::uint64_t first = a.offset >> min_order;
        DCUDA_CHECK(m.region_free(first, blocks));  // no overlap with a live block
        m.mark(first, blocks, true);
        live.push_back(a);
      } else {
        const std::size_t i = random() % live.size();
        std::uint64_t freed = 0;
        DCUDA_CHECK(h.heap.release(live[i].offset, &freed) == buddy_status::ok);
        DCUDA_CHECK_EQ(freed, live[i].bytes);
        m.mark(live[i].offset >> min_order, live[i].bytes >> min_order, false);
        live[i] = live.back();
        live.pop_back();
      }
      DCUDA_CHECK_EQ(h.heap.largest_free(), m.largest_free() << min_order);
      DCUDA_CHECK_EQ(h.heap.allocations(), live.size());
      // Every node, not only the root: a walk that stopped too early or wrote a stale value shows
      // here before it misplaces a block.
      DCUDA_CHECK(h.nodes == expected_nodes(min_order, max_order, live));
    }
    for (const buddy_allocation& a : live)
      DCUDA_CHECK(h.heap.release(a.offset) == buddy_status::ok);
    DCUDA_CHECK_EQ(h.heap.bytes_in_use(), 0u);
    DCUDA_CHECK_EQ(h.heap.largest_free(), std::uint64_t{1} << max_order);
  }
}

// The rank heaps format the bookkeeping once on the host and build each rank's allocator over a
// copy of it without touching it (buddy_heap::formatted): that allocator behaves as a fresh one,
// and a copy of an allocator (as a rank's thread 0 copies its own into registers and writes it
// back) carries its counts with it.
DCUDA_TEST(buddy_heap_over_formatted_bookkeeping_is_a_fresh_heap) {
  constexpr int min_order = dcuda::protocol::heap_min_order;
  constexpr int max_order = 16;
  std::vector<std::uint8_t> formatted(dcuda::protocol::buddy_node_bytes(min_order, max_order));
  buddy_heap::format(formatted.data(), min_order, max_order);
  test_heap fresh(min_order, max_order);
  DCUDA_CHECK(formatted == fresh.nodes);

  buddy_heap adopted(formatted.data(), min_order, max_order, buddy_heap::formatted);
  for (const std::uint64_t bytes : {1u, 300u, 4096u, 256u, 20000u}) {
    const auto a = adopted.allocate(bytes);
    const auto b = fresh.heap.allocate(bytes);
    DCUDA_CHECK(a.status == buddy_status::ok);
    DCUDA_CHECK_EQ(a.offset, b.offset);
    DCUDA_CHECK_EQ(a.bytes, b.bytes);
  }
  buddy_heap copy = adopted;  // the same bookkeeping, the counts carried along
  DCUDA_CHECK_EQ(copy.bytes_in_use(), fresh.heap.bytes_in_use());
  DCUDA_CHECK_EQ(copy.allocations(), std::uint64_t{5});
  DCUDA_CHECK_EQ(copy.largest_free(), fresh.heap.largest_free());
}

// A segment's order from the bytes asked for: rounded up to a power of two, at least the
// smallest block; 0 bytes is no heap; beyond the largest a window part holds is refused.
DCUDA_TEST(heap_order_rounds_up_and_refuses_beyond_the_largest_segment) {
  using dcuda::protocol::heap_order_for;
  DCUDA_CHECK_EQ(heap_order_for(0), 0);
  DCUDA_CHECK_EQ(heap_order_for(1), dcuda::protocol::heap_min_order);
  DCUDA_CHECK_EQ(heap_order_for(256), 8);
  DCUDA_CHECK_EQ(heap_order_for(257), 9);
  DCUDA_CHECK_EQ(heap_order_for(std::uint64_t{1} << 20), 20);
  DCUDA_CHECK_EQ(heap_order_for(std::uint64_t{1} << 30), 30);
  DCUDA_CHECK_EQ(heap_order_for((std::uint64_t{1} << 30) + 1), -1);
  DCUDA_CHECK_EQ(heap_order_for(~std::uint64_t{0}), -1);
  // The order of a size, at the ends of its range.
  using dcuda::protocol::buddy_order_of;
  DCUDA_CHECK_EQ(buddy_order_of(0), 0);
  DCUDA_CHECK_EQ(buddy_order_of(1), 0);
  DCUDA_CHECK_EQ(buddy_order_of(2), 1);
  DCUDA_CHECK_EQ(buddy_order_of(3), 2);
  for (int order = 2; order < 64; ++order) {
    DCUDA_CHECK_EQ(buddy_order_of(std::uint64_t{1} << order), order);
    DCUDA_CHECK_EQ(buddy_order_of((std::uint64_t{1} << order) - 1), order);
    DCUDA_CHECK_EQ(buddy_order_of((std::uint64_t{1} << order) + 1), order + 1);
  }
  DCUDA_CHECK_EQ(buddy_order_of(~std::uint64_t{0}), 64);
  // The heaps' window handle is well formed and names the reserved slot.
  DCUDA_CHECK(dcuda::protocol::window_handle_well_formed(dcuda::protocol::heap_window));
  DCUDA_CHECK_EQ(dcuda::protocol::window_slot(dcuda::protocol::heap_window),
                 dcuda::protocol::heap_slot);
}

// A heap as deep as the largest segment allows (1 GiB of 256-byte blocks: 23 levels), where an
// allocation keeps 22 siblings on its way down and a free reads its way up in six batches:
// smallest blocks handed out side by side, a block of every order up to a quarter of the segment,
// every one freed, and the whole segment one block again.
DCUDA_TEST(buddy_heap_of_the_largest_segment_splits_and_merges_through_every_level) {
  constexpr int min_order = dcuda::protocol::heap_min_order;
  constexpr int max_order = dcuda::protocol::heap_max_order;
  test_heap big(min_order, max_order);
  std::vector<std::uint64_t> offsets;
  for (int i = 0; i < 64; ++i) {
    const auto block = big.heap.allocate(1);
    DCUDA_CHECK(block.status == buddy_status::ok);
    DCUDA_CHECK_EQ(block.offset, static_cast<std::uint64_t>(i) << min_order);
    offsets.push_back(block.offset);
  }
  for (int order = min_order; order < max_order - 1; ++order) {
    const auto block = big.heap.allocate(std::uint64_t{1} << order);
    DCUDA_CHECK(block.status == buddy_status::ok);
    DCUDA_CHECK_EQ(block.offset % (std::uint64_t{1} << order), std::uint64_t{0});
    offsets.push_back(block.offset);
  }
  DCUDA_CHECK(big.heap.allocate(std::uint64_t{1} << (max_order - 1)).status ==
              buddy_status::exhausted);
  for (const std::uint64_t offset : offsets) {
    DCUDA_CHECK(big.heap.release(offset) == buddy_status::ok);
  }
  DCUDA_CHECK_EQ(big.heap.bytes_in_use(), std::uint64_t{0});
  DCUDA_CHECK_EQ(big.heap.largest_free(), std::uint64_t{1} << max_order);
  const auto whole = big.heap.allocate(std::uint64_t{1} << max_order);
  DCUDA_CHECK(whole.status == buddy_status::ok && whole.offset == 0);
}
