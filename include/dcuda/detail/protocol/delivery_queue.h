// The delivery agent's job queue (docs/design.md "Across GPUs and nodes"). While the persistent
// kernel fills the GPU, every copy or stream write the host enqueues costs about a microsecond
// per resident block (bench/results/h200x2/stream-ops-probe.log: a 4-byte copy 140 us, a 1 MiB
// copy 575 us with 132 blocks). So the host proxy does not copy: one extra block of the kernel,
// the delivery agent, does its copies between pinned host memory and device memory, and counts
// the notifications that came through the network.
//
// The queue lives in host memory mapped into the device. The proxy thread is its only producer:
// it stores a job's words, each stamped with the job's ticket (release stores). The agent block
// is its only consumer: it runs jobs in order and stores how many are done (release, system
// scope). A job is finished
// for the proxy when `done` has passed it: its copy has landed and its count is published.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"
#include "dcuda/detail/protocol/stamped_word.h"

namespace dcuda::protocol {

inline constexpr std::uint32_t delivery_queue_slots = 4096;

enum class delivery_job_kind : std::uint32_t {
  count_only = 0,  // no data: only the notification
  copy = 1,        // `bytes` from `source` to `destination`
  copy_inline =
      2,  // `bytes` (<= delivery_inline_bytes) carried in `source` itself, to `destination`
  // A typed put's piece on the network path (protocol/typed_piece.h): `source` is a
  // typed_piece_job in pinned memory and the piece's `bytes` packed bytes follow it.
  pack_piece = 3,    // from the typed side into the piece (the origin's agent)
  unpack_piece = 4,  // from the piece into the typed side (the target's agent)
};

// Whether the job is for the whole agent block (a copy of pinned or device memory), not for
// warp 0 alone.
DCUDA_HD constexpr bool job_for_whole_block(delivery_job_kind kind) {
  return kind == delivery_job_kind::copy || kind == delivery_job_kind::pack_piece ||
         kind == delivery_job_kind::unpack_piece;
}

// Payloads up to this size travel inside the job (in the `source` field): no read of pinned data
// on the latency path.
inline constexpr std::uint32_t delivery_inline_bytes = 8;

// The count that follows a job's data: a counter (device memory) and the scope of the agent's
// release. A rank's own counters are read by the ranks of this GPU alone: GPU scope. A rank's
// host-initiated counters (dcuda/host_stream.h, where puts into host windows count) are read by
// stream waits too, and every other writer releases them at system scope: so does the agent.
// The job's `counter` word holds the address with the scope in bit 0 (a counter is a 4-byte
// word); 0: no count.
struct job_count {
  std::uint32_t* counter = nullptr;
  bool system_scope = false;
};
inline constexpr std::uint64_t system_scope_count_bit = 1;
DCUDA_HD inline std::uint64_t encode_job_count(const job_count& count) {
  return reinterpret_cast<std::uint64_t>(count.counter) |
         (count.system_scope && count.counter != nullptr ? system_scope_count_bit : 0);
}
DCUDA_HD inline job_count decode_job_count(std::uint64_t field) {
  return {reinterpret_cast<std::uint32_t*>(field & ~system_scope_count_bit),
          (field & system_scope_count_bit) != 0};
}

// What a job asks for. It is never stored as such: the queue holds it as delivery_job_words.
struct delivery_job {
  delivery_job_kind kind;
  std::uint32_t bytes;
  std::uint64_t destination;
  std::uint64_t source;   // copy: the data's address; copy_inline: the data (first byte lowest)
  std::uint64_t counter;  // after the data: one more notification (encode_job_count), or 0
};

// A job in the queue: 8 stamped words (protocol/stamped_word.h), each with 32 bits of the job
// (delivery_job_field) and the job's ticket as the stamp. Every word proves by itself that it
// belongs to the job: the agent reads all 8 at once (one PCIe round trip, no separate ticket read)
// and takes the job when every word shows its ticket.
inline constexpr std::uint32_t delivery_job_words = 8;
struct alignas(64) delivery_job_slot {
  std::uint64_t words[delivery_job_words];
};
static_assert(sizeof(delivery_job_slot) == 64, "one job is one 64-byte line of host memory");

struct delivery_queue {
  delivery_job_slot jobs[delivery_queue_slots];
  alignas(64) std::uint32_t done;  // jobs finished, written by the agent
};

// Word i of a job holds: kind, bytes, destination (low, high), source (low, high), counter (low,
// high).
DCUDA_HD constexpr std::uint32_t delivery_job_field(const delivery_job& job, std::uint32_t i) {
  switch (i) {
    case 0:
      return static_cast<std::uint32_t>(job.kind);
    case 1:
      return job.bytes;
    case 2:
      return static_cast<std::uint32_t>(job.destination);
    case 3:
      return static_cast<std::uint32_t>(job.destination >> 32);
    case 4:
      return static_cast<std::uint32_t>(job.source);
    case 5:
      return static_cast<std::uint32_t>(job.source >> 32);
    case 6:
      return static_cast<std::uint32_t>(job.counter);
    default:
      return static_cast<std::uint32_t>(job.counter >> 32);
  }
}

DCUDA_HD constexpr delivery_job delivery_job_from_fields(
    const std::uint32_t (&fields)[delivery_job_words]) {
  const auto wide = [&](std::uint32_t low) {
    return static_cast<std::uint64_t>(fields[low]) | static_cast<std::uint64_t>(fields[low + 1])
                                                         << 32;
  };
  return delivery_job{static_cast<delivery_job_kind>(fields[0]), fields[1], wide(2), wide(4),
                      wide(6)};
}

DCUDA_HD inline std::uint32_t delivery_slot(std::uint32_t job) {
  return job % delivery_queue_slots;
}

// The ticket a slot holds once job `job` is in it. Never the ticket the slot held one lap before
// (job - delivery_queue_slots + 1), nor 0, the ticket of an empty queue's slots (job 2^32 - 1 takes
// 1, as the command channel's entry_sequence does).
DCUDA_HD inline std::uint32_t delivery_ticket(std::uint32_t job) {
  return job + 1u == 0u ? 1u : job + 1u;
}

// Whether `more` jobs fit after `issued` when `done` are finished (counts wrap around).
DCUDA_HD inline bool delivery_has_room(std::uint32_t issued, std::uint32_t done,
                                       std::uint32_t more) {
  return issued - done + more <= delivery_queue_slots;
}

// Whether job number `job` is finished when `done` jobs are (counts wrap around).
DCUDA_HD inline bool delivery_job_finished(std::uint32_t job, std::uint32_t done) {
  return done - job - 1u < 0x80000000u;
}

// After a job was seen: a block job's data (and a piece's typed_piece_job) lies in pinned memory
// the proxy wrote before the job's words (those stores were releases), so the thread that saw the
// words acquires it (a fence, not another load).
DCUDA_HD inline void acquire_job_data(delivery_job_kind kind) {
  if (job_for_whole_block(kind)) {
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
  }
}

// The consumer's side (the agent's thread 0; a host thread in the CPU tests). Whether job `job`
// is in its slot; when it is, the job.
DCUDA_HD inline bool delivery_take_job(delivery_queue& queue, std::uint32_t job,
                                       delivery_job& taken) {
  const std::uint32_t ticket = delivery_ticket(job);
  std::uint64_t* words = queue.jobs[delivery_slot(job)].words;
  std::uint64_t loaded[delivery_job_words];
  for (std::uint32_t i = 0; i < delivery_job_words; ++i) {
    loaded[i] = system_atomic<std::uint64_t>(words[i]).load(cuda::memory_order_relaxed);
  }
  std::uint32_t fields[delivery_job_words];
  bool complete = true;
  for (std::uint32_t i = 0; i < delivery_job_words; ++i) {
    complete = complete && word_has_stamp(loaded[i], ticket);
    fields[i] = stamped_field(loaded[i]);
  }
  if (!complete) return false;
  taken = delivery_job_from_fields(fields);
  acquire_job_data(taken.kind);
  return true;
}

// Job `job` and every job before it are finished: their copies are visible to whoever acquires
// `done` (a release, after the copies).
DCUDA_HD inline void delivery_finish(delivery_queue& queue, std::uint32_t job) {
  system_atomic<std::uint32_t>(queue.done).store(job + 1u, cuda::memory_order_release);
}

}  // namespace dcuda::protocol
