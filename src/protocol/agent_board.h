// How the delivery agent's probers hand jobs to its warp 0 (device/delivery_agent.cuh). It lives
// in device memory, not shared memory, and only block-scope atomics touch it: they are served by
// the SM's L1, so warp 0 polls it nearly as fast as shared memory, and every access is one that
// racecheck need not judge (racecheck checks shared memory, where it cannot follow a hand-over by
// release and acquire).
#pragma once

#include "protocol/agent_queue.h"

namespace dcuda::protocol {

inline constexpr unsigned agent_max_probers = 3;

// A prober's mailbox: the words of job `seen - 1`. The prober stores the words, then `seen` with
// release; warp 0's lane 0 loads `seen` with acquire, then the words.
struct agent_mailbox {
  std::uint64_t words[agent_job_words];
  std::uint32_t seen;
};

struct agent_board {
  agent_mailbox mailboxes[agent_max_probers];
  std::uint32_t wanted;  // warp 0: the job the probers look for
  std::uint32_t stop;    // warp 0: the agent ends; probers leave
};

}  // namespace dcuda::protocol
