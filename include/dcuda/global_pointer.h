// Global pointers (extension): a place in the memory of any rank, 128 bits, usable on the host
// and on the device, as DART's global pointers under DASH. A window is the segment: the pointer
// names the window, the rank of the window's communicator that holds the bytes (the unit), and
// the offset from that rank's window base. The device calls that take one are in
// dcuda/device/global_access.cuh; docs/api.md describes them.
//
// Arithmetic that crosses ranks treats the window as the ranks' parts laid end to end in rank
// order, each `unit_bytes` long: a team-aligned window, where every rank exposes the same size
// (dcuda_gptr_add on the device checks that the ranks it lands on do).
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"

struct dcuda_gptr {
  std::int32_t unit;     // rank of the window's communicator that holds the bytes
  std::int32_t window;   // the window (a dcuda_win handle)
  std::uint64_t offset;  // bytes from that rank's window base
};
static_assert(sizeof(dcuda_gptr) == 16, "a global pointer is 128 bits");

// What dcuda_gptr_of gives for DCUDA_WIN_NONE: no window, no rank.
#define DCUDA_GPTR_NULL (dcuda_gptr{-1, -1, 0})

DCUDA_HD constexpr bool dcuda_gptr_is_null(dcuda_gptr p) {
  return p.window < 0;
}
DCUDA_HD constexpr bool dcuda_gptr_equal(dcuda_gptr a, dcuda_gptr b) {
  return a.unit == b.unit && a.window == b.window && a.offset == b.offset;
}

// `p` moved by `bytes` (negative: backwards) through a window whose ranks each expose
// `unit_bytes` (> 0), crossing from one rank's part into the next where it reaches its end.
// The result's offset is always below unit_bytes, so a pointer one past a rank's last byte names
// the next rank's first. Ranks below 0 or past the communicator are not caught here: the call
// that uses the pointer checks its rank. Computed in 64-bit global byte positions: a part of at
// most 2^32 bytes, an offset and a step of at most 2^60 bytes keep them below 2^63. Beyond those,
// or where the rank would not fit 32 bits, the result is rank -1 (which every call refuses),
// never a wrapped position that could name another rank's bytes.
DCUDA_HD constexpr dcuda_gptr dcuda_gptr_advance(dcuda_gptr p, std::int64_t bytes,
                                                 std::uint64_t unit_bytes) {
  constexpr std::int64_t step_limit = std::int64_t{1} << 60;
  const dcuda_gptr nowhere{-1, p.window, 0};
  if (unit_bytes == 0 || unit_bytes > (std::uint64_t{1} << 32) || bytes > step_limit ||
      bytes < -step_limit || p.offset > static_cast<std::uint64_t>(step_limit)) {
    return nowhere;
  }
  const auto size = static_cast<std::int64_t>(unit_bytes);
  const std::int64_t position =
      static_cast<std::int64_t>(p.unit) * size + static_cast<std::int64_t>(p.offset) + bytes;
  // Floor division, so that a position before the first rank gives a negative rank.
  std::int64_t unit = position / size;
  std::int64_t offset = position % size;
  if (offset < 0) {
    offset += size;
    unit -= 1;
  }
  if (unit > INT32_MAX || unit < INT32_MIN) return nowhere;
  return dcuda_gptr{static_cast<std::int32_t>(unit), p.window, static_cast<std::uint64_t>(offset)};
}

// Bytes from `from` to `to` in such a window (to - from); both must name the same window.
DCUDA_HD constexpr std::int64_t dcuda_gptr_distance(dcuda_gptr from, dcuda_gptr to,
                                                    std::uint64_t unit_bytes) {
  const auto size = static_cast<std::int64_t>(unit_bytes);
  return (static_cast<std::int64_t>(to.unit) - from.unit) * size +
         static_cast<std::int64_t>(to.offset) - static_cast<std::int64_t>(from.offset);
}
