// The typed copy's sharing (protocol/typed_copy.h) on the CPU: every lane of every worker run one
// after another, for random pairs of layouts, both copy modes, aligned and unaligned buffers;
// every byte of the target checked, those between the typed bytes left untouched.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "datatype_models.h"
#include "datatypes/type_registry.h"
#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/typed_copy.h"
#include "dcuda/detail/protocol/typed_piece.h"
#include "test_main.h"

using namespace dcuda;
using namespace datatype_models;

namespace {

constexpr unsigned char untouched = 0xEE;

// A buffer whose origin lies in its middle (types reach below their origin), `misalignment`
// bytes past a 16-byte boundary.
struct buffer {
  std::vector<unsigned char> bytes;
  std::int64_t origin;
  buffer(std::int64_t reach, std::int64_t misalignment)
      : bytes(static_cast<std::size_t>(4 * reach + 64), untouched),
        origin(2 * reach + misalignment) {
    const auto address = reinterpret_cast<std::uintptr_t>(bytes.data());
    origin += static_cast<std::int64_t>((16 - address % 16) % 16);
  }
  unsigned char* at_origin() { return bytes.data() + origin; }
};

std::int64_t reach_of(const std::vector<std::int64_t>& offsets) {
  std::int64_t reach = 16;
  for (std::int64_t o : offsets) reach = std::max(reach, o < 0 ? -o : o + 1);
  return reach;
}

void run_every_lane(const protocol::typed_copy& copy, unsigned workers, unsigned lanes) {
  for (unsigned worker = 0; worker < workers; ++worker) {
    for (unsigned lane = 0; lane < lanes; ++lane) {
      protocol::copy_typed_share(copy, worker, workers, lane, lanes);
    }
  }
}

void run_range_every_lane(const protocol::typed_copy& copy, std::uint64_t begin, std::uint64_t end,
                          unsigned workers, unsigned lanes) {
  protocol::with_access_word(copy.width, [&](auto word) {
    for (unsigned worker = 0; worker < workers; ++worker) {
      for (unsigned lane = 0; lane < lanes; ++lane) {
        protocol::copy_typed_range_share_as<decltype(word)>(copy, begin, end, worker, workers, lane,
                                                            lanes);
      }
    }
  });
}

// Blocks of a random predefined type with random gaps between them, most at least 512 bytes
// long (the lanes copy together), one in four of one to three elements (short runs inside a
// chunk, which the lanes copy word by word).
built long_run_type(random_types& bases, std::mt19937& engine) {
  const built base = bases.make(0);
  const std::int64_t element = base.expected.extent();
  const int count = std::uniform_int_distribution<int>(1, 8)(engine);
  std::vector<int> lengths;
  std::vector<std::int64_t> displacements;
  std::vector<model_block> blocks;
  std::int64_t at = 0;
  for (int i = 0; i < count; ++i) {
    const bool short_block = std::uniform_int_distribution<int>(0, 3)(engine) == 0;
    const int length = short_block ? std::uniform_int_distribution<int>(1, 3)(engine)
                                   : static_cast<int>(512 / element) +
                                         std::uniform_int_distribution<int>(0, 40)(engine);
    lengths.push_back(length);
    displacements.push_back(at);
    blocks.push_back({length, at, &base.expected});
    at += (length + std::uniform_int_distribution<int>(0, 3)(engine)) * element;
  }
  dcuda_datatype t;
  dcuda_type_hindexed(count, lengths.data(), displacements.data(), base.handle, &t);
  return {t, blocks_model(blocks)};
}

}  // namespace

DCUDA_TEST(typed_copy_moves_every_byte_once_and_nothing_else) {
  random_types small_types(4242);
  random_types large_types(99, 8);  // up to tens of KiB: many chunks, every worker busy
  random_types bases(31);
  std::mt19937 long_run_engine(5);
  int copies_checked = 0;
  int copies_by_mode[2] = {0, 0};
  std::uint64_t largest = 0;
  for (int i = 0; i < 400; ++i) {
    random_types& types = i % 4 == 3 ? large_types : small_types;
    const int depth = i % 4 == 3 ? 1 + (i / 4) % 2 : 1 + i % 3;
    const bool long_runs = i % 8 == 5;  // the lanes copy together
    const built from = long_runs ? long_run_type(bases, long_run_engine) : types.make(depth);
    const built to = long_runs ? long_run_type(bases, long_run_engine) : types.make(depth);
    dcuda_datatype f = from.handle, t = to.handle;
    dcuda_type_commit(&f);
    dcuda_type_commit(&t);
    const auto source_layout = datatypes::type_registry::instance().layout(f, "typed_copy_test");
    const auto target_layout = datatypes::type_registry::instance().layout(t, "typed_copy_test");
    const int count = 1 + i % 3;
    const std::vector<std::int64_t> source_bytes = expected_bytes(from.expected, count);
    // As many target elements as hold the source's bytes; a target that covers a byte twice
    // decides nothing here (the typed calls refuse it as a target).
    if (to.expected.bytes.empty() ||
        (target_layout->layout.flags & protocol::layout_overlaps) != 0) {
      continue;
    }
    const std::size_t target_count =
        (source_bytes.size() + to.expected.bytes.size() - 1) / to.expected.bytes.size();
    std::vector<std::int64_t> target_bytes =
        expected_bytes(to.expected, static_cast<int>(target_count));
    target_bytes.resize(source_bytes.size());
    // Bytes of different target elements may still meet (elements overlapping each other).
    std::vector<std::int64_t> sorted = target_bytes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) continue;
    for (const unsigned lanes : {1u, 32u}) {
      for (const unsigned workers : {1u, 3u, 8u}) {
        for (const std::int64_t misalignment : {0, 4, 1}) {
          buffer source(reach_of(source_bytes), misalignment);
          buffer target(reach_of(target_bytes), misalignment == 1 ? 2 : misalignment);
          for (std::size_t b = 0; b < source.bytes.size(); ++b) {
            source.bytes[b] = static_cast<unsigned char>(b * 7 + 1);
          }
          const protocol::typed_copy copy = protocol::plan_typed_copy(
              reinterpret_cast<char*>(target.at_origin()), target_layout->layout,
              reinterpret_cast<const char*>(source.at_origin()), source_layout->layout,
              static_cast<std::uint64_t>(count));
          DCUDA_CHECK_EQ(copy.total, source_bytes.size());
          largest = std::max(largest, copy.total);
          run_every_lane(copy, workers, lanes);
          std::vector<unsigned char> expected(target.bytes.size(), untouched);
          for (std::size_t p = 0; p < source_bytes.size(); ++p) {
            expected[static_cast<std::size_t>(target.origin + target_bytes[p])] =
                source.bytes[static_cast<std::size_t>(source.origin + source_bytes[p])];
          }
          DCUDA_CHECK(target.bytes == expected);
          ++copies_checked;
          ++copies_by_mode[static_cast<int>(copy.mode)];
        }
      }
    }
    if (from.handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&f);
    if (to.handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&t);
  }
  DCUDA_CHECK(copies_checked > 1000);
  DCUDA_CHECK(copies_by_mode[0] > 50 && copies_by_mode[1] > 50);
  DCUDA_CHECK(largest > 8 * protocol::typed_chunk_bytes);
}

DCUDA_TEST(typed_copy_picks_its_width_and_mode) {
  dcuda_datatype column, block_rows;
  dcuda_type_vector(64, 1, 64, DCUDA_DOUBLE, &column);        // 8-byte runs
  dcuda_type_vector(16, 64, 128, DCUDA_DOUBLE, &block_rows);  // 512-byte runs
  dcuda_type_commit(&column);
  dcuda_type_commit(&block_rows);
  const auto c = datatypes::type_registry::instance().layout(column, "typed_copy_test");
  const auto r = datatypes::type_registry::instance().layout(block_rows, "typed_copy_test");
  alignas(16) static char a[16], b[16];
  DCUDA_CHECK_EQ(protocol::copy_width(r->layout, r->layout, a, b), 16u);
  DCUDA_CHECK_EQ(protocol::copy_width(c->layout, r->layout, a, b), 8u);
  DCUDA_CHECK_EQ(protocol::copy_width(r->layout, r->layout, a + 4, b), 4u);
  DCUDA_CHECK(protocol::copy_mode(r->layout, r->layout) ==
              protocol::typed_copy_mode::lanes_together);
  DCUDA_CHECK(protocol::copy_mode(c->layout, r->layout) == protocol::typed_copy_mode::lanes_apart);
  dcuda_type_free(&column);
  dcuda_type_free(&block_rows);
}

// A typed put on the network path (protocol/typed_piece.h): the origin's agent packs the stream
// piece by piece into staging (the piece's bytes after a 32-byte head), the target's agent
// unpacks each piece into the target. Pieces of every size from a few bytes to several chunks,
// at unaligned stream positions; the target must end up as a direct typed copy leaves it.
DCUDA_TEST(typed_pieces_pack_and_unpack_to_the_whole_copy) {
  random_types types(777, 8);
  int puts_checked = 0;
  int pieces = 0;
  for (int i = 0; i < 120; ++i) {
    const built from = types.make(1 + i % 3);
    const built to = types.make(1 + (i / 3) % 3);
    dcuda_datatype f = from.handle, t = to.handle;
    dcuda_type_commit(&f);
    dcuda_type_commit(&t);
    const auto source_layout = datatypes::type_registry::instance().layout(f, "typed_copy_test");
    const auto target_layout = datatypes::type_registry::instance().layout(t, "typed_copy_test");
    const int count = 1 + i % 4;
    const std::vector<std::int64_t> source_bytes = expected_bytes(from.expected, count);
    // As many target elements as hold the source's bytes (the copy stops at the source's end).
    const bool usable = !source_bytes.empty() && !to.expected.bytes.empty() &&
                        (target_layout->layout.flags & protocol::layout_overlaps) == 0;
    const std::size_t target_count =
        usable ? (source_bytes.size() + to.expected.bytes.size() - 1) / to.expected.bytes.size()
               : 0;
    std::vector<std::int64_t> target_bytes =
        usable ? expected_bytes(to.expected, static_cast<int>(target_count)) : source_bytes;
    target_bytes.resize(source_bytes.size());
    std::vector<std::int64_t> sorted = target_bytes;
    std::sort(sorted.begin(), sorted.end());
    if (!usable || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      if (from.handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&f);
      if (to.handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&t);
      continue;
    }
    const std::uint64_t total = source_bytes.size();
    const protocol::type_layout contiguous = protocol::contiguous_layout(total);
    for (const std::uint64_t piece_bytes :
         {std::uint64_t{7}, std::uint64_t{24}, std::uint64_t{4095}, std::uint64_t{3 * 4096 + 40}}) {
      if (piece_bytes < 32 && total > 4096) continue;  // the CPU runs every lane of every piece
      buffer source(reach_of(source_bytes), i % 2 == 0 ? 0 : 4);
      buffer target(reach_of(target_bytes), 0);
      for (std::size_t b = 0; b < source.bytes.size(); ++b) {
        source.bytes[b] = static_cast<unsigned char>(b * 13 + 5);
      }
      // The staging buffer: the head, then the piece (as the proxy lays it out).
      std::vector<unsigned char> staging(protocol::typed_piece_header_bytes + piece_bytes + 16);
      char* const packed =
          reinterpret_cast<char*>(staging.data()) + protocol::typed_piece_header_bytes;
      for (std::uint64_t at = 0; at < total; at += piece_bytes) {
        const std::uint64_t end = std::min(total, at + piece_bytes);
        const protocol::typed_piece_job origin{reinterpret_cast<std::uint64_t>(source.at_origin()),
                                               0, at, total};
        run_range_every_lane(protocol::plan_typed_piece(origin, source_layout->layout, contiguous,
                                                        packed, end - at, true),
                             at, end, 3, 32);
        const protocol::typed_piece_job arrival{reinterpret_cast<std::uint64_t>(target.at_origin()),
                                                0, at, total};
        run_range_every_lane(protocol::plan_typed_piece(arrival, target_layout->layout, contiguous,
                                                        packed, end - at, false),
                             at, end, 2, 32);
        ++pieces;
      }
      std::vector<unsigned char> expected(target.bytes.size(), untouched);
      for (std::size_t p = 0; p < source_bytes.size(); ++p) {
        expected[static_cast<std::size_t>(target.origin + target_bytes[p])] =
            source.bytes[static_cast<std::size_t>(source.origin + source_bytes[p])];
      }
      DCUDA_CHECK(target.bytes == expected);
      ++puts_checked;
    }
    if (from.handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&f);
    if (to.handle.id > DCUDA_DOUBLE.id) dcuda_type_free(&t);
  }
  DCUDA_CHECK(puts_checked > 50);
  DCUDA_CHECK(pieces > 2000);
}

// A copy's chunk grows with the bytes each worker gets, in whole smallest chunks, up to the
// largest: a rank's large put walks fewer chunks, a small one still keeps every warp busy.
DCUDA_TEST(typed_copy_chunks_grow_with_each_workers_share) {
  using protocol::chunk_for;
  DCUDA_CHECK_EQ(chunk_for(64 * 1024, 32), protocol::typed_chunk_bytes);  // 2 KiB a warp
  DCUDA_CHECK_EQ(chunk_for(40 * 1024, 8), std::uint64_t{8192});           // 5 KiB, rounded up
  DCUDA_CHECK_EQ(chunk_for(std::uint64_t{4} << 20, 32), protocol::largest_chunk_bytes);
  DCUDA_CHECK_EQ(chunk_for(1, 1), protocol::typed_chunk_bytes);
  DCUDA_CHECK_EQ(chunk_for(std::uint64_t{1} << 40, 3), protocol::largest_chunk_bytes);
  static_assert(protocol::largest_chunk_bytes % protocol::typed_chunk_bytes == 0);
  // A smaller smallest chunk: shares rounded up to whole ones of it, still capped at the largest.
  DCUDA_CHECK_EQ(chunk_for(std::uint64_t{4} << 20, 4104, 1024), std::uint64_t{1024});
  DCUDA_CHECK_EQ(chunk_for(std::uint64_t{4} << 20, 1000, 1024), std::uint64_t{5120});
  DCUDA_CHECK_EQ(chunk_for(1, 1, 1024), std::uint64_t{1024});
  DCUDA_CHECK_EQ(chunk_for(std::uint64_t{1} << 40, 3, 1024), protocol::largest_chunk_bytes);
}
