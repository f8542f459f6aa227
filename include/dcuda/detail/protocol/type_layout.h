// A committed datatype as the copy engine reads it, on the host and on the GPU: one element's data
// as runs of contiguous bytes in packed order, and how to find the bytes of any packed offset.
// The host builds it once per type (src/datatypes/, on commit); the typed calls and the pack and
// unpack calls walk it. Written once for both compilers and tested on the CPU.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

// How a layout stores its runs. `strided`: every run has the same length and the runs follow
// each other at one stride (a vector, a matrix's column block, a contiguous type as one run), so
// a run's place is computed. `listed`: each run's displacement and packed start are in tables.
enum class layout_kind : std::uint32_t { strided = 0, listed = 1 };

// Properties the host found when it built the layout.
enum layout_flag : std::uint32_t {
  // One element covers some byte twice: the layout may be read from, never written to (the
  // order of the two writes would decide the byte).
  layout_overlaps = 1u << 0,
};

struct type_layout {
  std::uint64_t size;    // packed bytes of one element: the sum of its runs' lengths
  std::int64_t extent;   // from one element's origin to the next one's
  std::int64_t true_lb;  // the lowest byte an element touches, from its origin
  std::int64_t true_ub;  // one past the highest
  layout_kind kind;
  std::uint32_t flags;  // layout_flag bits
  std::uint32_t unit;   // the largest power of two up to 16 dividing every displacement, run
                        // length and the extent: the widest access the layout itself allows
  std::uint32_t reserved;
  // The smallest k >= 1 for which element 0 and element k share a byte (0: no two elements ever
  // do): more than k elements of the layout cover some byte twice. A transpose's column type,
  // resized to one value, has period n: n columns are the matrix, n + 1 wrap onto it.
  std::uint64_t overlap_period;
  std::uint64_t run_count;  // runs in one element
  // strided: run i is run_bytes long, at first + i * stride.
  std::int64_t first;
  std::int64_t stride;
  std::uint64_t run_bytes;
  // listed: run i is at displacements[i] and holds packed bytes [run_starts[i], run_starts[i + 1])
  // (run_count + 1 entries, from 0 to size). Host or device memory, as the layout's reader needs.
  const std::int64_t* displacements;
  const std::uint64_t* run_starts;
  // listed, optional (null: none): entry b is the run holding packed byte b * run_index_bytes of
  // an element (the last byte for the last entry), for b = 0 .. size / run_index_bytes + 1. A
  // cursor placed anywhere searches only the runs between two entries instead of all of them:
  // one or two loads instead of log2(run_count) dependent ones (a lower triangle's 8,192 runs
  // cost 13 at every chunk).
  const std::uint64_t* run_index;
};

// Packed bytes per entry of a listed layout's run index: one typed copy chunk (typed_copy.h
// checks that the two stay equal).
inline constexpr std::uint64_t run_index_bytes = 4096;

// Entries of the run index of a layout of `size` packed bytes.
DCUDA_HD inline std::uint64_t run_index_entries(std::uint64_t size) {
  return size / run_index_bytes + 2;
}

// Whether `count` elements of the layout cover some byte twice (and so may not be written to).
DCUDA_HD inline bool covers_a_byte_twice(const type_layout& t, std::uint64_t count) {
  if (count == 0 || t.size == 0) return false;
  return (t.flags & layout_overlaps) != 0u || (t.overlap_period != 0 && count > t.overlap_period);
}

// `bytes` contiguous bytes as one element: the packed side of a pack or an unpack.
DCUDA_HD inline type_layout contiguous_layout(std::uint64_t bytes) {
  type_layout t{};
  t.size = bytes;
  t.extent = static_cast<std::int64_t>(bytes);
  t.true_ub = static_cast<std::int64_t>(bytes);
  t.kind = layout_kind::strided;
  t.unit = 16;
  t.run_count = 1;
  t.run_bytes = bytes;
  return t;
}

// a / b, by 32-bit division when both fit (a GPU divides 64-bit numbers in software, several
// times slower; a copy's cursors divide once per word).
DCUDA_HD inline std::uint64_t quotient(std::uint64_t a, std::uint64_t b) {
  if (((a | b) >> 32) == 0) return static_cast<std::uint32_t>(a) / static_cast<std::uint32_t>(b);
  return a / b;
}

// `value` in units of `unit`: returns value / unit and leaves the rest in `rest`.
DCUDA_HD inline std::uint64_t split(std::uint64_t value, std::uint64_t unit, std::uint64_t& rest) {
  const std::uint64_t units = quotient(value, unit);
  rest = value - units * unit;
  return units;
}

// Where the walk of a layout stands: in element `element`, run `run`, `within` bytes into it.
struct type_cursor {
  std::uint64_t element;
  std::uint64_t run;
  std::uint64_t within;
};

// The index of the run holding packed byte `packed` (< size) of one element of a listed layout,
// searched among runs [low, high) (run_starts[low] <= packed < run_starts[high]): the last run
// that starts at or before it. Runs of length zero are never listed.
DCUDA_HD inline std::uint64_t run_holding_between(const type_layout& t, std::uint64_t packed,
                                                  std::uint64_t low, std::uint64_t high) {
  while (high - low > 1) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (t.run_starts[middle] <= packed) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

// The same from run `low` on (run_starts[low] <= packed): between the two run index entries
// around `packed` where the layout has an index, up to the last run otherwise.
DCUDA_HD inline std::uint64_t run_holding_from(const type_layout& t, std::uint64_t packed,
                                               std::uint64_t low) {
  if (t.run_index == nullptr) return run_holding_between(t, packed, low, t.run_count);
  const std::uint64_t entry = packed / run_index_bytes;
  const std::uint64_t indexed = t.run_index[entry];
  return run_holding_between(t, packed, indexed > low ? indexed : low, t.run_index[entry + 1] + 1);
}

DCUDA_HD inline std::uint64_t run_holding(const type_layout& t, std::uint64_t packed) {
  return run_holding_from(t, packed, 0);
}

// The cursor of packed byte `packed` of a typed buffer (elements one after another); size > 0.
DCUDA_HD inline type_cursor cursor_at(const type_layout& t, std::uint64_t packed) {
  std::uint64_t in_element = 0;
  const std::uint64_t element = split(packed, t.size, in_element);
  if (t.kind == layout_kind::strided) {
    std::uint64_t within = 0;
    const std::uint64_t run = split(in_element, t.run_bytes, within);
    return {element, run, within};
  }
  const std::uint64_t run = run_holding(t, in_element);
  return {element, run, in_element - t.run_starts[run]};
}

// The run's length under the cursor.
DCUDA_HD inline std::uint64_t run_length(const type_layout& t, std::uint64_t run) {
  return t.kind == layout_kind::strided ? t.run_bytes : t.run_starts[run + 1] - t.run_starts[run];
}

// The byte under the cursor, from the buffer's origin.
DCUDA_HD inline std::int64_t offset_of(const type_layout& t, const type_cursor& at) {
  const std::int64_t run_start = t.kind == layout_kind::strided
                                     ? t.first + static_cast<std::int64_t>(at.run) * t.stride
                                     : t.displacements[at.run];
  return static_cast<std::int64_t>(at.element) * t.extent + run_start +
         static_cast<std::int64_t>(at.within);
}

// Bytes from the cursor to the end of its run: what can be copied from it in one piece.
DCUDA_HD inline std::uint64_t contiguous_from(const type_layout& t, const type_cursor& at) {
  return run_length(t, at.run) - at.within;
}

// Moves the cursor `bytes` ahead; at most contiguous_from(t, at), so that it stays in its run or
// steps to the start of the next one (of the next element after the last run).
DCUDA_HD inline void advance(const type_layout& t, type_cursor& at, std::uint64_t bytes) {
  at.within += bytes;
  if (at.within < run_length(t, at.run)) return;
  at.within = 0;
  if (++at.run == t.run_count) {
    at.run = 0;
    ++at.element;
  }
}

// Moves the cursor of a listed layout any number of bytes ahead, across runs and elements: a
// short forward scan, a search beyond a few runs.
DCUDA_HD inline void advance_listed_by(const type_layout& t, type_cursor& at, std::uint64_t bytes) {
  std::uint64_t in_element = t.run_starts[at.run] + at.within + bytes;
  std::uint64_t run = at.run;
  if (in_element >= t.size) {
    at.element += split(in_element, t.size, in_element);
    run = 0;
  }
  constexpr std::uint64_t scanned_runs = 4;
  for (std::uint64_t k = 0; k < scanned_runs && run + 1 < t.run_count; ++k) {
    if (t.run_starts[run + 1] > in_element) break;
    ++run;
  }
  if (run + 1 < t.run_count && t.run_starts[run + 1] <= in_element) {
    run = run_holding_from(t, in_element, run + 1);
  }
  at.run = run;
  at.within = in_element - t.run_starts[run];
}

// A fixed step of a cursor, taken again and again (a lane's stride through a chunk): for a
// strided layout the whole runs and the bytes left over in one step, divided out once, so that a
// step costs a few additions (step_cursor); a listed layout steps by advance_listed_by.
struct cursor_step {
  std::uint64_t bytes;
  std::uint64_t runs;    // strided: whole runs in `bytes`
  std::uint64_t within;  // strided: the bytes left over
};

DCUDA_HD inline cursor_step step_of(const type_layout& t, std::uint64_t bytes) {
  cursor_step step{bytes, 0, 0};
  if (t.kind == layout_kind::strided) step.runs = split(bytes, t.run_bytes, step.within);
  return step;
}

// Moves the cursor step.bytes ahead, across runs and elements (step made by step_of(t, ...)).
DCUDA_HD inline void step_cursor(const type_layout& t, type_cursor& at, const cursor_step& step) {
  if (t.kind != layout_kind::strided) {
    advance_listed_by(t, at, step.bytes);
    return;
  }
  at.within += step.within;
  std::uint64_t run = at.run + step.runs;
  if (at.within >= t.run_bytes) {
    at.within -= t.run_bytes;
    ++run;
  }
  if (run < t.run_count) {
    at.run = run;
  } else if (t.run_count == 1) {  // a type of one run (a predefined one): every run an element
    at.run = 0;
    at.element += run;
  } else if (run - t.run_count < t.run_count) {
    at.run = run - t.run_count;
    ++at.element;
  } else {
    at.element += split(run, t.run_count, at.run);
  }
}

// Moves the cursor any number of bytes ahead, once.
DCUDA_HD inline void advance_by(const type_layout& t, type_cursor& at, std::uint64_t bytes) {
  step_cursor(t, at, step_of(t, bytes));
}

// Calls piece(source_offset, target_offset, bytes) for the pieces that copy packed bytes
// [begin, end) of a buffer laid out as `source` into one laid out as `target` (their sizes per
// element may differ; the packed streams are matched byte for byte), until it returns false.
// Each piece is contiguous on both sides; pieces come in packed order. One search per layout at
// `begin`, then one step per piece. Returns the packed offset where the walk stopped: `end`, or
// the start of the piece refused.
template <typename Piece>
DCUDA_HD std::uint64_t walk_pieces(const type_layout& source, const type_layout& target,
                                   std::uint64_t begin, std::uint64_t end, Piece&& piece) {
  if (begin >= end) return end;
  type_cursor from = cursor_at(source, begin);
  type_cursor to = cursor_at(target, begin);
  for (std::uint64_t at = begin; at < end;) {
    std::uint64_t bytes = end - at;
    const std::uint64_t source_left = contiguous_from(source, from);
    const std::uint64_t target_left = contiguous_from(target, to);
    if (source_left < bytes) bytes = source_left;
    if (target_left < bytes) bytes = target_left;
    if (!piece(offset_of(source, from), offset_of(target, to), bytes)) return at;
    advance(source, from, bytes);
    advance(target, to, bytes);
    at += bytes;
  }
  return end;
}

// The same for every piece of [begin, end).
template <typename Piece>
DCUDA_HD void for_each_piece(const type_layout& source, const type_layout& target,
                             std::uint64_t begin, std::uint64_t end, Piece&& piece) {
  walk_pieces(source, target, begin, end,
              [&](std::int64_t from, std::int64_t to, std::uint64_t bytes) {
                piece(from, to, bytes);
                return true;
              });
}

// The bytes `count` elements touch, from the buffer's origin: [low, high). False when the range
// does not fit 64 bits (then nothing is set). An empty range (count 0 or size 0) is [0, 0).
DCUDA_HD inline bool typed_range(const type_layout& t, std::uint64_t count, std::int64_t& low,
                                 std::int64_t& high) {
  if (count == 0 || t.size == 0) {
    low = high = 0;
    return true;
  }
  const std::uint64_t steps = count - 1;
  const std::uint64_t magnitude = t.extent < 0 ? 0 - static_cast<std::uint64_t>(t.extent)
                                               : static_cast<std::uint64_t>(t.extent);
  constexpr std::uint64_t limit = static_cast<std::uint64_t>(INT64_MAX) / 4;
  if (magnitude != 0 && steps > limit / magnitude) return false;
  const std::int64_t span = static_cast<std::int64_t>(steps * magnitude);
  low = t.extent < 0 ? t.true_lb - span : t.true_lb;
  high = t.extent < 0 ? t.true_ub : t.true_ub + span;
  return true;
}

// Whether `count` elements of the layout can be copied at all: their packed bytes fit 64 bits
// with room to spare, and so does the range they touch (typed_range). The typed calls refuse the
// others before anything moves.
DCUDA_HD inline bool typed_span_fits(const type_layout& t, std::uint64_t count) {
  std::int64_t low = 0, high = 0;
  return (t.size == 0 || count <= UINT64_MAX / 4 / t.size) && typed_range(t, count, low, high);
}

}  // namespace dcuda::protocol
