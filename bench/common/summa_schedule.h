// The communication of SUMMA (van de Geijn and Watts) on a q x q grid of dcuda ranks, and its
// time as the performance model predicts it (bench/summa_model.cu; docs/model.md). Host only,
// tested on the CPU (tests/bench/summa_schedule_test.cpp).
//
// World rank r holds blocks (i, j) = (r / q, r % q) of A, B and C, each b x b doubles. Step k of
// q: rank (i, k) puts its A block to every other rank of row i, in ascending column; rank (k, j)
// puts its B block to every other rank of column j, in ascending row; rank (k, k) sends its A
// blocks first, then its B blocks. Every rank then multiplies the A and B blocks of step k into C.
// The steps are separated by barriers, so each step's communication starts together.
//
// Who starts the puts: each rank its own, side by side (device-initiated: ranks_issue_apart), or
// the GPU one after another in the order the host queued them, every rank's in turn, ascending
// (host-initiated: each put is a kernel or a copy the GPU's front end starts, and it starts them
// at the aggregate message rate of the streams that send: gpu_issues_in_turn). Host-initiated,
// the ranks' stream waits, queued after every put of the step, then pass one after another too,
// `stream_wait_us` each, in the order of the ranks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace dcuda_bench::summa {

struct grid {
  int side;           // q
  int ranks_per_gpu;  // world ranks [g * ranks_per_gpu, (g + 1) * ranks_per_gpu) on GPU g

  int row(int rank) const { return rank / side; }
  int column(int rank) const { return rank % side; }
  int rank(int row, int column) const { return row * side + column; }
  int gpu(int rank) const { return rank / ranks_per_gpu; }
};

// The targets of `sender`'s puts in step `step`, in the order it sends them.
inline std::vector<int> targets(const grid& g, int sender, int step) {
  std::vector<int> order;
  const int i = g.row(sender), j = g.column(sender);
  if (j == step) {
    for (int c = 0; c < g.side; ++c) {
      if (c != step) order.push_back(g.rank(i, c));
    }
  }
  if (i == step) {
    for (int r = 0; r < g.side; ++r) {
      if (r != step) order.push_back(g.rank(r, j));
    }
  }
  return order;
}

// What the model says of one put of the block size from one rank to another: `first` its time
// until it is notified when the sender starts it, `each` the time it holds the sender before the
// next put can start (the pipelined time per message), in microseconds. `senders_on_gpu`: the
// ranks of the sender's GPU that send in the step (host-initiated, the streams whose puts the GPU
// plays at once: their aggregate time per message is not one stream's).
struct put_cost {
  double first;
  double each;
};
using put_model = std::function<put_cost(bool same_gpu, int senders_on_gpu)>;

// The ranks of `gpu` that put anything in `step`.
inline int senders_on_gpu(const grid& g, int gpu, int step) {
  int senders = 0;
  for (int rank = gpu * g.ranks_per_gpu; rank < (gpu + 1) * g.ranks_per_gpu; ++rank) {
    if (!targets(g, rank, step).empty()) ++senders;
  }
  return senders;
}

enum class issuing { ranks_issue_apart, gpu_issues_in_turn };

// The predicted communication time of `rank` in `step`: from the step's start until it has
// received what it needs (the A block unless it owns it, the B block likewise) and, when it
// sends, until its last put was notified at its target. (The benchmark stops a sender's clock
// when its last put returns; on the same GPU and the peer path a put returns once its bytes are
// in the target window, at most its latency before the notification arrives.)
inline double predicted_step_us(const grid& g, const put_model& cost, int rank, int step,
                                issuing who = issuing::ranks_issue_apart,
                                double stream_wait_us = 0) {
  const auto cost_of = [&](int sender, int target) {
    return cost(g.gpu(sender) == g.gpu(target), senders_on_gpu(g, g.gpu(sender), step));
  };
  const auto each_of = [&](int sender) {
    double sum = 0;
    for (int target : targets(g, sender, step)) sum += cost_of(sender, target).each;
    return sum;
  };
  const auto arrival = [&](int sender, int receiver) {
    double issued = 0;                         // when the sender's put to `receiver` starts
    if (who == issuing::gpu_issues_in_turn) {  // after the puts of the GPU's earlier ranks
      for (int earlier = g.gpu(sender) * g.ranks_per_gpu; earlier < sender; ++earlier) {
        issued += each_of(earlier);
      }
    }
    for (int target : targets(g, sender, step)) {
      const put_cost one = cost_of(sender, target);
      if (target == receiver) return issued + one.first;
      issued += one.each;
    }
    return 0.0;  // not a target: nothing to wait for
  };
  const int i = g.row(rank), j = g.column(rank);
  double done = 0;
  if (j != step) done = std::max(done, arrival(g.rank(i, step), rank));
  if (i != step) done = std::max(done, arrival(g.rank(step, j), rank));
  const std::vector<int> mine = targets(g, rank, step);
  if (!mine.empty()) done = std::max(done, arrival(rank, mine.back()));
  if (who == issuing::gpu_issues_in_turn) {
    const int first = g.gpu(rank) * g.ranks_per_gpu;
    const auto waits_of = [&](int r) {
      return (g.column(r) != step ? 1 : 0) + (g.row(r) != step ? 1 : 0);
    };
    double puts_issued = 0;  // every put of the GPU's step has started
    for (int sender = first; sender < first + g.ranks_per_gpu; ++sender) {
      puts_issued += each_of(sender);
    }
    int waits_passed = 0;  // the waits of this rank and of the GPU's ranks before it
    for (int r = first; r <= rank; ++r) waits_passed += waits_of(r);
    if (waits_of(rank) > 0) done = std::max(done, puts_issued + stream_wait_us * waits_passed);
  }
  return done;
}

// The mean over all ranks of their predicted communication time summed over the q steps.
inline double predicted_mean_us(const grid& g, const put_model& cost,
                                issuing who = issuing::ranks_issue_apart,
                                double stream_wait_us = 0) {
  double total = 0;
  const int ranks = g.side * g.side;
  for (int rank = 0; rank < ranks; ++rank) {
    for (int step = 0; step < g.side; ++step) {
      total += predicted_step_us(g, cost, rank, step, who, stream_wait_us);
    }
  }
  return total / ranks;
}

}  // namespace dcuda_bench::summa
