// The three layouts of an N x N row-major matrix of doubles the datatype benchmarks move
// (pack_bandwidth on one GPU, typed_put_bandwidth between two): a column block (a strided
// layout), the lower triangle (a listed one) and the transpose (runs of one value).
#pragma once

namespace dcuda_bench {

enum class layout_kind : int { column_block, lower_triangle, transpose };
inline constexpr layout_kind kinds[] = {layout_kind::column_block, layout_kind::lower_triangle,
                                        layout_kind::transpose};
inline constexpr int kind_count = 3;

inline const char* kind_name(layout_kind kind) {
  switch (kind) {
    case layout_kind::column_block:
      return "V (column block)";
    case layout_kind::lower_triangle:
      return "T (lower triangle)";
    case layout_kind::transpose:
      return "X (transpose)";
  }
  return "?";
}

}  // namespace dcuda_bench
