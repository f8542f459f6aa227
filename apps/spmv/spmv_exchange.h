// The messages of the baselines (spmv and power iteration): a process's part of a binomial tree
// over its grid column or row (spmv_tree.h), round by round, as device buffers to send and to
// receive into. The exchanges (spmv_exchange_mpi.cuh, spmv_exchange_nccl.cuh) carry one round at
// a time:
//   void round(const round_transfers& transfers);  // every send and receive of the round
//   void barrier();                                 // all processes
//   void start_timing();   // from now on, count communication time
//   double communication_ms();
#pragma once

#include <cstddef>
#include <vector>

#include "spmv_grid.h"
#include "spmv_tree.h"

namespace spmv {

struct transfer {
  double* buffer;  // device memory
  std::size_t count;
  int peer;  // process
};
struct round_transfers {
  std::vector<transfer> sends, receives;
  bool empty() const { return sends.empty() && receives.empty(); }
};

// A binomial broadcast from member 0 of a group (count members, member m being process
// process_of(m)) of `buffer` (count values, the same place on every process): this member's
// sends and its receive, round by round.
template <typename ProcessOf>
std::vector<round_transfers> broadcast_rounds(int members, int me, ProcessOf process_of,
                                              double* buffer, std::size_t count) {
  std::vector<round_transfers> rounds(static_cast<std::size_t>(tree_rounds(members)));
  for (const tree_message& message : broadcast_schedule(members)) {
    if (message.from == me)
      rounds[message.round].sends.push_back({buffer, count, process_of(message.to)});
    if (message.to == me)
      rounds[message.round].receives.push_back({buffer, count, process_of(message.from)});
  }
  return rounds;
}

// A binomial reduction to member 0 of a group: a child's partial sum arrives in `received`
// (the caller adds it into `value` after the round), `value` goes to the parent.
template <typename ProcessOf>
std::vector<round_transfers> reduction_rounds(int members, int me, ProcessOf process_of,
                                              double* value, double* received, std::size_t count) {
  std::vector<round_transfers> rounds(static_cast<std::size_t>(tree_rounds(members)));
  for (const tree_message& message : reduction_schedule(members)) {
    if (message.from == me)
      rounds[message.round].sends.push_back({value, count, process_of(message.to)});
    if (message.to == me)
      rounds[message.round].receives.push_back({received, count, process_of(message.from)});
  }
  return rounds;
}

// b from the first row down this process's column.
inline std::vector<round_transfers> column_broadcast_rounds(const process_grid& grid, int process,
                                                            double* buffer, std::size_t count) {
  const int col = grid.col_of(process);
  return broadcast_rounds(
      grid.rows, grid.row_of(process), [&](int row) { return grid.process_at(row, col); }, buffer,
      count);
}

// The partial results along this process's row to the first column.
inline std::vector<round_transfers> row_reduction_rounds(const process_grid& grid, int process,
                                                         double* y, double* received,
                                                         std::size_t count) {
  const int row = grid.row_of(process);
  return reduction_rounds(
      grid.cols, grid.col_of(process), [&](int col) { return grid.process_at(row, col); }, y,
      received, count);
}

}  // namespace spmv
