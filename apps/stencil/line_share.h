// A dcuda rank's share of its GPU's part of the grid (stencil_dcuda.cu), in lines: a line is one
// row at one level (nx points), numbered row by row, line = row * nz + level. Shares are runs of
// lines as even as integer division makes them, so no rank has more than one line more than
// another. Whole rows would leave some ranks a row (nz lines) more: 2048 rows over 132 ranks give
// 16 or 15 rows, and the ranks with 15 wait for the ones with 16 (docs/case-studies.md).
//
// A share may begin and end inside a row: at level k the rank owns rows
// rows_at(k) = [first_row + (k < first_level), end_row + (k < end_level)). A share of at least nz
// lines (rows >= ranks) owns a row at every level, so a rank's points read rows of its two
// neighbours only, as with whole rows. The first rank of a GPU begins, and the last one ends, on a
// row boundary: the rows they exchange with other GPUs are whole.
// Host and device: tests/apps checks on the CPU that the shares cover every line once.
#pragma once

#include "host_device.h"
#include "point_walk.h"

namespace stencil {

struct row_range {
  int begin, end;
};

class line_share {
 public:
  // Share `rank` of `ranks` of `rows` rows of `levels` levels each.
  APP_HD line_share(int rows, int levels, int rank, int ranks) {
    const long long lines = static_cast<long long>(rows) * levels;
    const long long first = lines * rank / ranks, end = lines * (rank + 1) / ranks;
    first_row_ = static_cast<int>(first / levels);
    first_level_ = static_cast<int>(first % levels);
    end_row_ = static_cast<int>(end / levels);
    end_level_ = static_cast<int>(end % levels);
  }

  APP_HD row_range rows_at(int level) const {
    return {first_row_ + (level < first_level_ ? 1 : 0), end_row_ + (level < end_level_ ? 1 : 0)};
  }

  // The share's points at levels [k_begin, k_end) as at most three blocks of whole rows: the
  // levels split where the first or the last row changes. Returns how many blocks it wrote.
  APP_HD int blocks(int k_begin, int k_end, point_block out[3]) const {
    const int low = first_level_ < end_level_ ? first_level_ : end_level_;
    const int high = first_level_ < end_level_ ? end_level_ : first_level_;
    int cuts[4] = {k_begin, 0, 0, 0};
    int count = 1;
    if (low > k_begin && low < k_end) cuts[count++] = low;
    if (high > k_begin && high < k_end && high != low) cuts[count++] = high;
    cuts[count] = k_end;
    int written = 0;
    for (int piece = 0; piece < count; ++piece) {
      const row_range rows = rows_at(cuts[piece]);
      if (rows.begin < rows.end)
        out[written++] = point_block{rows.begin, rows.end, cuts[piece], cuts[piece + 1]};
    }
    return written;
  }

 private:
  int first_row_, first_level_, end_row_, end_level_;
};

}  // namespace stencil
