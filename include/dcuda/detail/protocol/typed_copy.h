// How a typed copy (pack, unpack, a typed put) is shared out: the packed stream is cut into
// chunks, the workers (warps) take chunks in turn, and the lanes of a worker copy each chunk's
// pieces together (long runs, type_layout.h: for_each_piece) or its words in turn (short runs,
// each lane stepping its own cursors: step_cursor). Written once for both compilers: the GPU runs
// every lane at once, the CPU tests run them one after another and check every byte.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"
#include "dcuda/detail/protocol/type_layout.h"

namespace dcuda::protocol {

// Packed bytes a worker takes at a time, at least: a few KiB keep every warp busy on one piece of
// work while the chunks stay many enough to share a small copy among all warps of a rank. A
// copy with more bytes per worker takes larger chunks, up to largest_chunk_bytes (chunk_for):
// every chunk starts with its cursors and its walk, which at 4 KiB cost a rank's typed put of a
// column block a quarter of its bandwidth (docs/performance.md, "What was tried"). 64 KiB was
// faster still for the column block but left a rank's warps idle on a small lower triangle.
inline constexpr std::uint64_t typed_chunk_bytes = 4096;
inline constexpr std::uint64_t largest_chunk_bytes = 16384;
// A listed layout's run index has one entry per smallest chunk's worth of packed bytes, so that
// each chunk's first cursor searches the runs of about one entry (type_layout.h).
static_assert(run_index_bytes == typed_chunk_bytes, "the run index is sized to the copy's chunks");

// The chunk of a copy of `bytes` shared among `workers`: each worker's share rounded up to whole
// smallest chunks (`smallest`, typed_chunk_bytes unless a copy of many workers asks for less),
// within [smallest, largest_chunk_bytes].
DCUDA_HD inline std::uint64_t chunk_for(std::uint64_t bytes, std::uint32_t workers,
                                        std::uint64_t smallest = typed_chunk_bytes) {
  const std::uint64_t share = quotient(bytes + workers - 1, workers);
  const std::uint64_t chunk = quotient(share + smallest - 1, smallest) * smallest;
  return chunk < smallest ? smallest : (chunk > largest_chunk_bytes ? largest_chunk_bytes : chunk);
}

// Words a lane loads before it stores any: reads in flight keep the memory (or the link) busy
// where a rank has few warps. 64 bytes a lane (8 words, 4 of 16 bytes), in registers: 128 bytes
// a lane made the copy kernel spill.
template <typename Word>
inline constexpr std::uint32_t words_in_flight = sizeof(Word) >= 16 ? 4u : 8u;

// Runs at least this long (on average, on both sides) are copied piece by piece by all lanes of a
// worker together, each access of the warp contiguous. Shorter runs are copied word by word, the
// lanes taking the chunk's words in turn, each stepping its own cursors: a matrix transpose's
// 8-byte runs would otherwise leave 31 of 32 lanes idle, and per-word stepping costs more than it
// saves where runs are long. One access of every lane of a warp at the widest word: a shorter
// piece inside a chunk is what makes a piece-by-piece copy switch to word by word
// (copy_pieces_of_range), so runs below it would walk their pieces only to switch.
inline constexpr std::uint64_t cooperative_run_bytes = 32 * 16;

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

struct alignas(16) word16 {
  std::uint64_t low, high;
};

// Short runs: lane `lane` of `lanes` copies packed words lane, lane + lanes, lane + 2 lanes, ...
// of [begin, end), so the lanes of a warp touch consecutive packed words at every step and every
// lane works however short the runs (a transpose's 8-byte elements). A word never straddles a
// run: the width divides every run and displacement of both layouts.
template <typename Word>
DCUDA_HD void copy_words_of_range(const typed_copy& copy, std::uint64_t begin, std::uint64_t end,
                                  std::uint32_t lane, std::uint32_t lanes) {
  const type_layout& from_layout = *copy.source_layout;
  const type_layout& to_layout = *copy.target_layout;
  const std::uint64_t step = static_cast<std::uint64_t>(lanes) * sizeof(Word);
  std::uint64_t at = begin + static_cast<std::uint64_t>(lane) * sizeof(Word);
  if (at >= end) return;
  type_cursor from = cursor_at(from_layout, at);
  type_cursor to = cursor_at(to_layout, at);
  const cursor_step from_step = step_of(from_layout, step);
  const cursor_step to_step = step_of(to_layout, step);
  while (at < end) {
    Word words[words_in_flight<Word>];
    std::int64_t targets[words_in_flight<Word>];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t k = 0; k < words_in_flight<Word>; ++k) {
      if (at + k * step < end) {
        words[k] = *reinterpret_cast<const Word*>(copy.source + offset_of(from_layout, from));
        targets[k] = offset_of(to_layout, to);
        if (at + (k + 1) * step < end) {
          step_cursor(from_layout, from, from_step);
          step_cursor(to_layout, to, to_step);
        }
      }
    }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t k = 0; k < words_in_flight<Word>; ++k) {
      if (at + k * step < end) *reinterpret_cast<Word*>(copy.target + targets[k]) = words[k];
    }
    at += words_in_flight<Word> * step;
  }
}

// Lane `lane` of `lanes` copies its words of one contiguous piece: words lane, lane + lanes, ...,
// `words_in_flight` loads before their stores. The loads of a whole group are unconditional (the
// group lies inside the piece); the lane's last words, fewer than a group, follow as one
// predicated group after the loop. A predicated load inside the loop would keep its register's
// old value alive across iterations: in a rank's 64 registers that spilled every loaded word to
// local memory and waited for each load there (a third of a typed put's bandwidth).
template <typename Word>
DCUDA_HD void copy_piece_words(char* target, const char* source, std::uint64_t bytes,
                               std::uint32_t lane, std::uint32_t lanes) {
  auto* to = reinterpret_cast<Word*>(target);
  const auto* from = reinterpret_cast<const Word*>(source);
  const std::uint64_t words = bytes / sizeof(Word);
  const std::uint64_t group_span = static_cast<std::uint64_t>(lanes) * (words_in_flight<Word> - 1);
  std::uint64_t w = lane;
  for (; w + group_span < words; w += static_cast<std::uint64_t>(lanes) * words_in_flight<Word>) {
    Word held[words_in_flight<Word>];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t k = 0; k < words_in_flight<Word>; ++k) held[k] = from[w + k * lanes];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t k = 0; k < words_in_flight<Word>; ++k) to[w + k * lanes] = held[k];
  }
  Word held[words_in_flight<Word>];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t k = 0; k < words_in_flight<Word>; ++k) {
    if (w + k * lanes < words) held[k] = from[w + k * lanes];
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t k = 0; k < words_in_flight<Word>; ++k) {
    if (w + k * lanes < words) to[w + k * lanes] = held[k];
  }
}

// Packed bytes [begin, end), piece by piece, every lane of the worker on each piece. A short run
// inside the chunk (shorter than one access per lane: a lower triangle's first rows) leaves lanes
// idle, and many of them one after another would leave the warp idle: from the first such piece
// on, the rest of the chunk is copied word by word. The chunk's first and last pieces, runs cut
// by its edges, do not count. Every lane sees the same pieces, so the warp switches together.
template <typename Word>
DCUDA_HD void copy_pieces_of_range(const typed_copy& copy, std::uint64_t begin, std::uint64_t end,
                                   std::uint32_t lane, std::uint32_t lanes) {
  const std::uint64_t short_piece =
      lanes > 1 ? static_cast<std::uint64_t>(lanes) * sizeof(Word) : 0;
  std::uint64_t at = begin;
  const std::uint64_t stopped = walk_pieces(
      *copy.source_layout, *copy.target_layout, begin, end,
      [&](std::int64_t from, std::int64_t to, std::uint64_t bytes) {
        if (bytes < short_piece && at != begin && at + bytes != end) return false;
        copy_piece_words<Word>(copy.target + to, copy.source + from, bytes, lane, lanes);
        at += bytes;
        return true;
      });
  if (stopped < end) copy_words_of_range<Word>(copy, stopped, end, lane, lanes);
}

template <typename Word>
DCUDA_HD void copy_range_as(const typed_copy& copy, std::uint64_t begin, std::uint64_t end,
                            std::uint32_t lane, std::uint32_t lanes) {
  if (copy.mode == typed_copy_mode::lanes_together) {
    copy_pieces_of_range<Word>(copy, begin, end, lane, lanes);
  } else {
    copy_words_of_range<Word>(copy, begin, end, lane, lanes);
  }
}

}  // namespace typed_copy_detail

// Lane `lane` of worker `worker` (of `workers`, `lanes` lanes each: a power of two up to 32) does
// its share of copying packed bytes [begin, end) of the copy, `Word` bytes per access (at most
// copy.width), the range cut into chunks from `begin`. Every lane of every worker must call it;
// together they copy every byte of the range once.
template <typename Word>
DCUDA_HD void copy_typed_range_share_as(const typed_copy& copy, std::uint64_t begin,
                                        std::uint64_t end, std::uint32_t worker,
                                        std::uint32_t workers, std::uint32_t lane,
                                        std::uint32_t lanes) {
  const std::uint64_t chunk_bytes = chunk_for(end - begin, workers);
  for (std::uint64_t chunk = worker; chunk * chunk_bytes < end - begin; chunk += workers) {
    const std::uint64_t from = begin + chunk * chunk_bytes;
    const std::uint64_t to = end - from < chunk_bytes ? end : from + chunk_bytes;
    typed_copy_detail::copy_range_as<Word>(copy, from, to, lane, lanes);
  }
}

// The same for the whole copy. A kernel that knows the width from its launch calls this one and
// carries only that width's code (fewer registers).
template <typename Word>
DCUDA_HD void copy_typed_share_as(const typed_copy& copy, std::uint32_t worker,
                                  std::uint32_t workers, std::uint32_t lane, std::uint32_t lanes) {
  copy_typed_range_share_as<Word>(copy, 0, copy.total, worker, workers, lane, lanes);
}

// Calls use(Word{}) with the unsigned word of `width` bytes (1, 2, 4, 8, 16): the one place
// where a copy's width, known at run time, picks the code compiled for it. `use` may be host-only
// (a kernel launch) or device-only (a rank's copy): nvcc is told not to check the call against
// this function's __host__ __device__.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <typename Use>
DCUDA_HD void with_access_word(std::uint32_t width, Use&& use) {
  switch (width) {
    case 16:
      use(typed_copy_detail::word16{});
      break;
    case 8:
      use(std::uint64_t{});
      break;
    case 4:
      use(std::uint32_t{});
      break;
    case 2:
      use(std::uint16_t{});
      break;
    default:
      use(std::uint8_t{});
      break;
  }
}

// The same at the plan's width.
DCUDA_HD inline void copy_typed_share(const typed_copy& copy, std::uint32_t worker,
                                      std::uint32_t workers, std::uint32_t lane,
                                      std::uint32_t lanes) {
  with_access_word(copy.width, [&](auto word) {
    copy_typed_share_as<decltype(word)>(copy, worker, workers, lane, lanes);
  });
}

}  // namespace dcuda::protocol
