// The one loop every dcuda wait goes through. Its fast path is a single check. A wait that spins
// longer than ctx->report_wait_after_ns publishes what it waits for (the rank's wait_record in
// host memory), refreshes it when it makes partial progress, and stops the kernel when the host
// watchdog asks: no wait in dcuda can hang without the host being able to say why.
#pragma once

#include "dcuda/detail/device/clock.cuh"
#include "dcuda/detail/device/ring_poll.cuh"
#include "dcuda/device/state.cuh"

namespace dcuda::device {

inline constexpr std::uint32_t backoff_after_spins = 1u << 14;  // roughly 5 ms of polling
inline constexpr unsigned backoff_ns = 1000;

struct wait_description {
  protocol::call call;
  protocol::wait_kind kind;
  std::int32_t detail;
  std::uint32_t needed;
};

__device__ inline void write_wait_record(dcuda_state& gst, const wait_description& what,
                                         std::uint32_t available, std::uint32_t started) {
  protocol::wait_record& record = gst.ctx->wait_records[gst.device_rank];
  volatile protocol::wait_record& fields = record;
  fields.kind = static_cast<std::uint32_t>(what.kind);
  fields.call_id = static_cast<std::uint32_t>(what.call);
  fields.detail = what.detail;
  fields.needed = what.needed;
  fields.available = available;
  fields.started = started;
  // A plain release store, not an atomic add: only this thread writes the record, and atomic
  // read-modify-writes on host memory depend on the PCIe platform.
  protocol::system_atomic<std::uint32_t>(record.version)
      .store(++gst.record_writes, cuda::memory_order_release);
}

// What a wait that lasts has published of itself (spin_until's bookkeeping, every 1024 spins).
struct long_wait {
  std::uint64_t start;
  std::uint64_t last_publish = 0;
  std::uint32_t published_available = 0;
  bool published = false;
};

// Every 1024 spins of a wait: once it has lasted ctx->report_wait_after_ns, publishes what it
// waits for (again when it makes progress, and every 100 ms), and stops the kernel when the host
// watchdog asks. Out of line and shared by every wait: inlined into each of them, this rarely
// run code sat between the fast paths' instructions and made them miss the instruction cache
// (docs/notes/performance-history.md, "Code size").
__device__ __noinline__ inline void note_long_wait(dcuda_state& gst, wait_description what,
                                                   std::uint32_t available, long_wait& wait) {
  const dcuda_context* ctx = gst.ctx;
  const std::uint64_t now = global_time_ns();
  if (now - wait.start < ctx->report_wait_after_ns) return;
  if (!wait.published || available != wait.published_available ||
      now - wait.last_publish > 100000000ull) {
    if (!wait.published) ++gst.waits_published;
    write_wait_record(gst, what, available, gst.waits_published);
    wait.published = true;
    wait.published_available = available;
    wait.last_publish = now;
  }
  if (protocol::system_atomic<std::uint32_t>(*ctx->abort_requested)
          .load(cuda::memory_order_relaxed) != 0u) {
    __trap();  // the host has printed who waits for what; end the kernel
  }
}

// A published wait is over: its record says so.
__device__ __noinline__ inline void end_published_wait(dcuda_state& gst, wait_description what) {
  write_wait_record(gst, wait_description{what.call, protocol::wait_kind::none, 0, 0}, 0,
                    gst.waits_published);
}

// Called by thread 0 of the rank only (it owns the rank's wait_record).
// `check(available)` returns true when the wait is over and sets `available` for diagnostics.
template <typename Check>
__device__ inline void spin_until(dcuda_state& gst, const wait_description& what, Check&& check) {
  std::uint32_t available = 0;
  if (check(available)) return;

  long_wait wait{global_time_ns()};
  for (std::uint32_t spins = 1;; ++spins) {
    if (check(available)) break;
    // Records other GPUs send to this rank are taken in every wait: a sender that waits for room
    // in this rank's ring goes on even while this rank waits for something else.
    if ((spins & 63u) == 0u && gst.ring_peers != 0u) poll_rings_out_of_line(gst);
    // A wait that has lasted a while backs off, so that idle ranks (waiting in a barrier while
    // others work) do not load the memory system the working ranks use. Short waits, where
    // latency matters, never sleep.
    if (spins > backoff_after_spins) __nanosleep(backoff_ns);
    if ((spins & 1023u) == 0u) note_long_wait(gst, what, available, wait);
  }
  if (wait.published) end_published_wait(gst, what);
}

}  // namespace dcuda::device
