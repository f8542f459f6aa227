// How a typed copy (pack, unpack, a typed put) is shared out: the packed stream is cut into
// chunks, the workers (warps) take chunks in turn, and the lanes of a worker copy each chunk's
// pieces (type_layout.h: for_each_piece). Written once for both compilers: the GPU runs every
// lane at once, the CPU tests run them one after another and check every byte.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"
#include "dcuda/detail/protocol/type_layout.h"

namespace dcuda::protocol {

// Packed bytes a worker takes at a time: a few KiB keep every warp busy on one piece of work
// while the chunks stay many enough to share a small copy among all warps of a rank.
inline constexpr std::uint64_t typed_chunk_bytes = 4096;

// Runs at least this long (on average, on both sides) are copied by all lanes of a worker
// together, each access of the warp contiguous; shorter runs are shared out among the lanes, each
// lane walking a slice of the chunk alone (a matrix transpose's 8-byte runs would otherwise leave
// 31 of 32 lanes idle).
inline constexpr std::uint64_t cooperative_run_bytes = 256;

enum class typed_copy_mode : std::uint32_t { lanes_together = 0, lanes_apart = 1 };

struct typed_copy {
  char* target;
  const char* source;
  const type_layout* target_layout;
  const type_layout* source_layout;
  std::uint64_t total;  // packed bytes to copy: count elements of the source
  std::uint32_t width;  // bytes per access: 1, 2, 4, 8 or 16
  typed_copy_mode mode;
};

// The widest access that every piece of the copy allows: both layouts' units and both buffers'
// alignment.
DCUDA_HD inline std::uint32_t copy_width(const type_layout& a, const type_layout& b, const void* pa,
                                         const void* pb) {
  const std::uint64_t bits = static_cast<std::uint64_t>(a.unit) | b.unit |
                             reinterpret_cast<std::uintptr_t>(pa) |
                             reinterpret_cast<std::uintptr_t>(pb);
  // The units are powers of two: the lowest bit set anywhere decides.
  std::uint32_t width = 16;
  while (width > 1 && bits % width != 0) width /= 2;
  return width;
}

DCUDA_HD inline typed_copy_mode copy_mode(const type_layout& a, const type_layout& b) {
  const auto average = [](const type_layout& t) {
    return t.run_count == 0 ? t.size : t.size / t.run_count;
  };
  return average(a) >= cooperative_run_bytes && average(b) >= cooperative_run_bytes
             ? typed_copy_mode::lanes_together
             : typed_copy_mode::lanes_apart;
}

// The plan of copying `count` elements of `source_layout` at `source` into `target` laid out as
// `target_layout` (whose packed size for the same bytes must match: the caller checks).
DCUDA_HD inline typed_copy plan_typed_copy(char* target, const type_layout& target_layout,
                                           const char* source, const type_layout& source_layout,
                                           std::uint64_t count) {
  return {target,
          source,
          &target_layout,
          &source_layout,
          count * source_layout.size,
          copy_width(target_layout, source_layout, target, source),
          copy_mode(target_layout, source_layout)};
}

namespace typed_copy_detail {

template <typename Word>
DCUDA_HD void copy_words(char* target, const char* source, std::uint64_t bytes, std::uint32_t lane,
                         std::uint32_t lanes) {
  auto* to = reinterpret_cast<Word*>(target);
  const auto* from = reinterpret_cast<const Word*>(source);
  const std::uint64_t words = bytes / sizeof(Word);
  for (std::uint64_t w = lane; w < words; w += lanes) to[w] = from[w];
}

// `lane` of `lanes` copies its words of one piece, `width` bytes each.
DCUDA_HD inline void copy_piece(char* target, const char* source, std::uint64_t bytes,
                                std::uint32_t width, std::uint32_t lane, std::uint32_t lanes) {
  struct alignas(16) word16 {
    std::uint64_t low, high;
  };
  switch (width) {
    case 16:
      copy_words<word16>(target, source, bytes, lane, lanes);
      break;
    case 8:
      copy_words<std::uint64_t>(target, source, bytes, lane, lanes);
      break;
    case 4:
      copy_words<std::uint32_t>(target, source, bytes, lane, lanes);
      break;
    case 2:
      copy_words<std::uint16_t>(target, source, bytes, lane, lanes);
      break;
    default:
      copy_words<std::uint8_t>(target, source, bytes, lane, lanes);
      break;
  }
}

// Packed bytes [begin, end) by one lane or by all lanes of a worker together.
DCUDA_HD inline void copy_range(const typed_copy& copy, std::uint64_t begin, std::uint64_t end,
                                std::uint32_t lane, std::uint32_t lanes) {
  for_each_piece(*copy.source_layout, *copy.target_layout, begin, end,
                 [&](std::int64_t from, std::int64_t to, std::uint64_t bytes) {
                   copy_piece(copy.target + to, copy.source + from, bytes, copy.width, lane, lanes);
                 });
}

}  // namespace typed_copy_detail

// Lane `lane` of worker `worker` (of `workers`, `lanes` lanes each: a power of two up to 32) does
// its share of the copy. Every lane of every worker must call it; together they copy every packed
// byte once.
DCUDA_HD inline void copy_typed_share(const typed_copy& copy, std::uint32_t worker,
                                      std::uint32_t workers, std::uint32_t lane,
                                      std::uint32_t lanes) {
  const std::uint64_t slice = typed_chunk_bytes / lanes;  // a lane's part of a chunk, apart
  for (std::uint64_t chunk = worker; chunk * typed_chunk_bytes < copy.total; chunk += workers) {
    const std::uint64_t begin = chunk * typed_chunk_bytes;
    const std::uint64_t end =
        copy.total - begin < typed_chunk_bytes ? copy.total : begin + typed_chunk_bytes;
    if (copy.mode == typed_copy_mode::lanes_together) {
      typed_copy_detail::copy_range(copy, begin, end, lane, lanes);
    } else {
      const std::uint64_t mine = begin + lane * slice;
      if (mine < end) {
        typed_copy_detail::copy_range(copy, mine, end - mine < slice ? end : mine + slice, 0, 1);
      }
    }
  }
}

}  // namespace dcuda::protocol
