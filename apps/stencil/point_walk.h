// How a thread walks its share of a block of points (stencil_kernels.cuh): thread `thread` of
// `threads` takes points thread, thread + threads, ... of the block, numbered level by level,
// row by row, x fastest. The move by `threads` points is split once into levels, rows and points,
// so that a step is additions and two carries, not the two integer divisions per point that
// numbering each point from scratch costs (measured: about a sixth of a rank's time,
// docs/case-studies.md). Host and device: tests/apps checks on the CPU that the threads together
// visit every point of a block exactly once.
#pragma once

#include "host_device.h"
#include "stencil_problem.h"

namespace stencil {

// A block of points: rows j_begin..j_end-1 at levels k_begin..k_end-1.
struct point_block {
  int j_begin, j_end, k_begin, k_end;
};

class point_walk {
 public:
  // `width` points at a time (1, or 2 for pairs): the thread takes the first of `width`
  // neighbouring points in x, and nx must be a multiple of `width`.
  APP_HD point_walk(const grid_shape& g, point_block block, unsigned thread, unsigned threads,
                    unsigned width = 1)
      : nx_(static_cast<unsigned>(g.nx)),
        rows_(static_cast<unsigned>(block.j_end - block.j_begin)),
        levels_(static_cast<unsigned>(block.k_end - block.k_begin)),
        plane_(static_cast<unsigned>(g.plane_size())) {
    const unsigned row_steps = nx_ / width;  // a row's points, counted in steps of `width`
    const unsigned level_steps = rows_ * row_steps;
    stride_levels_ = threads / level_steps;
    stride_rows_ = threads % level_steps / row_steps;
    stride_points_ = threads % row_steps * width;
    stride_at_ = stride_rows_ * plane_ + stride_levels_ * nx_ + stride_points_;
    k_ = thread / level_steps;
    row_ = thread % level_steps / row_steps;
    i_ = thread % row_steps * width;
    at_ = static_cast<unsigned>(g.plane_start(block.j_begin)) +
          static_cast<unsigned>(block.k_begin) * nx_ + row_ * plane_ + k_ * nx_ + i_;
  }

  APP_HD bool done() const { return k_ >= levels_; }
  APP_HD unsigned at() const { return at_; }             // position in the field
  APP_HD int i() const { return static_cast<int>(i_); }  // x coordinate

  // Whether a step keeps the thread's x: the threads are a multiple of a row (a rank of 1024
  // threads on rows of 512 points). Then next_in_column() is the whole step, without the x carry,
  // and the loop keeps fewer values live (it runs with the few registers a function compiled
  // apart gets, stencil_rank_stages.h).
  APP_HD bool keeps_column() const { return stride_points_ == 0; }
  APP_HD void next_in_column() {
    row_ += stride_rows_;
    k_ += stride_levels_;
    at_ += stride_at_;
    if (row_ >= rows_) {
      row_ -= rows_;
      ++k_;
      at_ += nx_ - rows_ * plane_;
    }
  }

  // `at` is unsigned and wraps: it goes back by a level's rows when the row carries, and comes
  // out right modulo 2^32 (setup_from keeps a GPU's field below 2^31 values).
  APP_HD void next() {
    i_ += stride_points_;
    row_ += stride_rows_;
    k_ += stride_levels_;
    at_ += stride_at_;
    if (i_ >= nx_) {
      i_ -= nx_;
      ++row_;
      at_ += plane_ - nx_;
    }
    if (row_ >= rows_) {  // at most 2 * rows - 1 here: one carry is enough
      row_ -= rows_;
      ++k_;
      at_ += nx_ - rows_ * plane_;
    }
  }

 private:
  unsigned nx_, rows_, levels_, plane_;
  unsigned stride_levels_, stride_rows_, stride_points_, stride_at_;
  unsigned k_, row_, i_, at_;  // relative to the block's first level and row; at_ absolute
};

// Pairs of points: a thread may take two neighbouring points in x at once (points 2m and 2m + 1
// of a row, a walk of width 2), each of its loads 16 bytes. Every pair is 16-byte aligned when a
// field starts so (cudaMalloc) and nx and pad are even.
APP_HD inline bool has_pairs(const grid_shape& g) {
  return g.nx % 2 == 0 && g.pad % 2 == 0;
}

}  // namespace stencil
