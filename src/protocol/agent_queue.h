// The delivery agent's job queue (docs/design.md "Across GPUs and nodes"). While the persistent
// kernel fills the GPU, every copy or stream write the host enqueues costs about a microsecond
// per resident block (bench/results/h200x2/stream-ops-probe.log: a 4-byte copy 140 us, a 1 MiB
// copy 575 us with 132 blocks). So the host proxy does not copy: one extra block of the kernel,
// the delivery agent, does its copies between pinned host memory and device memory, and counts
// the notifications that came through the network.
//
// The queue lives in host memory mapped into the device. The proxy thread is its only producer:
// it fills a job, then stores the job's ticket (release). The agent block is its only consumer:
// it runs jobs in order and stores how many are done (release, system scope). A job is finished
// for the proxy when `done` has passed it: its copy has landed and its count is published.
#pragma once

#include <cstdint>

#include "protocol/portability.h"

namespace dcuda::protocol {

inline constexpr std::uint32_t agent_queue_slots = 4096;
// Payloads up to this size travel inside the job: one read of host memory fewer on the latency
// path.
inline constexpr std::uint32_t agent_inline_bytes = 24;

enum class agent_job_kind : std::uint32_t {
  count_only = 0,   // no data: only the notification
  copy = 1,         // `bytes` from `source` to `destination`
  copy_inline = 2,  // `bytes` (<= agent_inline_bytes) from `payload` to `destination`
};

struct alignas(64) agent_job {
  std::uint32_t ticket;  // agent_ticket(job number) once the job is complete; written last
  std::uint32_t kind;    // agent_job_kind
  std::uint64_t destination;
  std::uint64_t source;
  std::uint64_t bytes;
  // After the data: one more notification on this counter (device memory), or 0.
  std::uint64_t counter;
  unsigned char payload[agent_inline_bytes];
};
static_assert(sizeof(agent_job) == 64, "one job is one 64-byte line of host memory");

struct agent_queue {
  agent_job jobs[agent_queue_slots];
  alignas(64) std::uint32_t done;  // jobs finished, written by the agent
};

DCUDA_HD inline std::uint32_t agent_slot(std::uint32_t job) {
  return job % agent_queue_slots;
}

// The ticket a slot holds once job `job` is in it. Never the ticket the slot held one lap before
// (job - agent_queue_slots + 1), nor 0, the ticket of an empty queue's slots, for the first lap.
DCUDA_HD inline std::uint32_t agent_ticket(std::uint32_t job) {
  return job + 1u;
}

// Whether `more` jobs fit after `issued` when `done` are finished (counts wrap around).
DCUDA_HD inline bool agent_has_room(std::uint32_t issued, std::uint32_t done, std::uint32_t more) {
  return issued - done + more <= agent_queue_slots;
}

// Whether job number `job` is finished when `done` jobs are (counts wrap around).
DCUDA_HD inline bool agent_job_finished(std::uint32_t job, std::uint32_t done) {
  return done - job - 1u < 0x80000000u;
}

// The consumer's side (the agent's thread 0; a host thread in the CPU tests). Whether job `job`
// is in its slot; when it is, an acquire, so that its fields (and the pinned data it points to,
// written before the ticket) can be read.
DCUDA_HD inline bool agent_job_ready(agent_queue& queue, std::uint32_t job) {
  system_atomic<std::uint32_t> ticket(queue.jobs[agent_slot(job)].ticket);
  if (ticket.load(cuda::memory_order_relaxed) != agent_ticket(job)) return false;
  ticket.load(cuda::memory_order_acquire);
  return true;
}

// Job `job` and every job before it are finished: their copies are visible to whoever acquires
// `done` (a release, after the copies).
DCUDA_HD inline void agent_finish(agent_queue& queue, std::uint32_t job) {
  system_atomic<std::uint32_t>(queue.done).store(job + 1u, cuda::memory_order_release);
}

}  // namespace dcuda::protocol
