// The leaders' side of the world barrier within a node (protocol/node_barrier.h): rank 0 of each
// GPU writes its word into the board of every other GPU of the node and waits for theirs. Thread
// 0 of rank 0 only, between the two device barriers of the world barrier
// (detail/device/barriers.cuh).
#pragma once

#include "dcuda/detail/device/fail.cuh"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/device/ring_poll.cuh"
#include "dcuda/detail/device/spin_wait.cuh"
#include "dcuda/device/state.cuh"
#include "dcuda/detail/protocol/node_barrier.h"

namespace dcuda::device {

// Tells every other GPU of the node that this GPU's ranks have entered collective `sequence`
// with `call`. The fence releases, at system scope, what this GPU's ranks did before the device
// barrier that precedes it (which this thread acquired): their puts to other GPUs and their ring
// records. One fence, then relaxed stores: the stores to the peers are in flight together.
__device__ __noinline__ inline void post_board_word(const dcuda_state& gst, std::uint32_t sequence,
                                                    protocol::call call) {
  const std::uint64_t word =
      protocol::encode_board_word(sequence, static_cast<std::uint32_t>(call));
  std::uint64_t* const* out = gst.ctx->board_out;
  fence_release_sys();
  for (std::uint32_t peer = 0; peer < gst.ring_peers; ++peer)
    store_relaxed_sys_u64(out[peer], word);
}

// Waits until every other GPU's leader has entered collective `sequence`; stops the run, naming
// both processes and calls, when one entered it with another call. Takes this rank's ring
// records meanwhile (spin_until), so that no sender waits for room in its rings forever. Out of
// line: one thread of one rank runs it, once per world barrier, and inlined, its board scan
// (up to 15 words loaded together) raised the spills of 1024-thread kernels, which have 64
// registers (local_bandwidth: 1.1 to 2.7 KB of spill stores).
__device__ __noinline__ inline void wait_for_board(dcuda_state& gst, std::uint32_t sequence,
                                                   protocol::call call) {
  const dcuda_context* ctx = gst.ctx;
  const std::uint64_t* board = ctx->board;
  const std::int32_t me = ctx->process_index;
  const std::uint32_t peers = gst.ring_peers;
  // The watchdog's masks are by process, so that its report can name the missing ones.
  const auto process_bits = [&](std::uint32_t peer_bits) {
    return protocol::board_process_bits(peer_bits, me);
  };
  const std::uint32_t all = protocol::all_peers_mask(peers);
  spin_until(
      gst,
      wait_description{call, protocol::wait_kind::node_barrier, static_cast<std::int32_t>(sequence),
                       process_bits(all)},
      [&](std::uint32_t& arrived) {
        const protocol::board_scan scan = protocol::scan_board(
            [&](std::uint32_t peer) { return load_relaxed_sys_u64(board + peer); }, peers, sequence,
            static_cast<std::uint32_t>(call));
        if (scan.mismatched_peer >= 0) {
          fail(ctx, gst.world_rank, call, protocol::error_code::collective_mismatch, me,
               protocol::board_peer_process(static_cast<std::uint32_t>(scan.mismatched_peer), me),
               scan.mismatched_call);
        }
        arrived = process_bits(scan.arrived);
        return scan.arrived == all;
      });
  // Acquire (the polls were relaxed): what the other GPUs' ranks did before their leaders wrote
  // their words is visible to this thread and, through the device barrier that follows, to every
  // rank of this GPU.
  fence_acquire_sys();
}

}  // namespace dcuda::device
