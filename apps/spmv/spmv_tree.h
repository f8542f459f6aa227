// The binomial trees of spmv and power iteration (thesis 5.6): a broadcast from member 0 of a
// group (b down a column of the process grid) and a reduction to member 0 (x along a row). The
// members of a group are numbered 0..count-1 (the grid row within a column, the grid column within
// a row); a message goes in round t = log2(step) between members `step` apart.
//
//   broadcast, round t (step 2^t): member m < step sends to m + step (when it exists). So member
//   m > 0 receives once, from m - highest_bit(m), in round log2(highest_bit(m)), and then sends
//   to m + s for the powers of two s > m, in increasing s.
//   reduction, round t (step 2^t): member m with m mod 2 step = step sends its partial sum to
//   m - step. So member m receives from m + s for s = 1, 2, 4, ... while m mod 2s = 0, in that
//   order, adding each, and then (m > 0) sends to m - lowest_bit(m) in round log2(lowest_bit(m)).
//
// Every program loops over children with these functions (device code included), so the order of
// additions, and hence the rounding of every element, is the same in every version and in the
// CPU model (spmv_reference.h). The host schedules below list the same messages for the tests.
#pragma once

#include <vector>

#include "host_device.h"

namespace spmv {

APP_HD inline int highest_bit(int m) {
  int bit = 1;
  while (bit <= m / 2) bit *= 2;
  return bit;
}
APP_HD inline int lowest_bit(int m) {
  return m & -m;
}
APP_HD inline int log2_of(int power_of_two) {
  int t = 0;
  while ((1 << t) < power_of_two) ++t;
  return t;
}

// Broadcast: the member m receives from (-1 for the root).
APP_HD inline int broadcast_parent(int m) {
  return m == 0 ? -1 : m - highest_bit(m);
}
// The first step s at which m sends; its children are m + s, m + 2s, ... below count.
APP_HD inline int broadcast_first_step(int m) {
  return m == 0 ? 1 : 2 * highest_bit(m);
}

// Reduction: the member m sends to (-1 for the root), and the round of that message.
APP_HD inline int reduction_parent(int m) {
  return m == 0 ? -1 : m - lowest_bit(m);
}
APP_HD inline int reduction_send_round(int m) {
  return log2_of(lowest_bit(m));
}
// Whether m receives from m + step (step a power of two), in round log2(step).
APP_HD inline bool reduction_receives(int m, int step, int count) {
  return (m & (2 * step - 1)) == 0 && m + step < count;
}
// Whether m still waits for children at steps >= step: the loop bound of a receiving member.
APP_HD inline bool reduction_has_step(int m, int step, int count) {
  return step < count && (m & (2 * step - 1)) == 0;
}
// Rounds of a reduction (or broadcast) over count members: ceil(log2(count)).
APP_HD inline int tree_rounds(int count) {
  return log2_of(count);
}

struct tree_message {
  int round;
  int from;
  int to;
};

// Every message of a broadcast from member 0 over `count` members, round by round.
inline std::vector<tree_message> broadcast_schedule(int count) {
  std::vector<tree_message> messages;
  for (int round = 0; (1 << round) < count; ++round)
    for (int m = 1; m < count; ++m)
      if (broadcast_parent(m) >= 0 && log2_of(highest_bit(m)) == round)
        messages.push_back({round, broadcast_parent(m), m});
  return messages;
}

// Every message of a reduction to member 0 over `count` members, round by round.
inline std::vector<tree_message> reduction_schedule(int count) {
  std::vector<tree_message> messages;
  for (int round = 0; (1 << round) < count; ++round)
    for (int m = 1; m < count; ++m)
      if (reduction_send_round(m) == round) messages.push_back({round, m, reduction_parent(m)});
  return messages;
}

}  // namespace spmv
