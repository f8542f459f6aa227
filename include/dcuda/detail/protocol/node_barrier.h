// The world barrier within a node (docs/design.md, "World barrier within a node"). When every
// process of the job reaches every other by the peer path, a barrier of DCUDA_COMM_WORLD
// (dcuda_comm_barrier, dcuda_gpu_finish) needs no host: after a device barrier, the leader of
// each GPU (rank 0, thread 0) writes one word into the board of every other GPU of the node and
// waits until its own board holds the word of every other GPU; a second device barrier releases
// its ranks. One one-way trip over NVLink instead of two trips through the host proxies and MPI.
//
// A board is one 8-byte word per other GPU of the node (per ring peer, numbered as the rings
// are), at the end of the GPU's ring memory (ring_memory_layout::board), zeroed before each run.
// The word says which collective of DCUDA_COMM_WORLD its writer has entered: its sequence (the
// count of world collectives of the run, shared with those that go through the host: window
// creation and release, and the barrier of dcuda_gpu_init) and its call, so that processes that
// make different collective calls are caught and named, as the host proxies name them.
//
// Who writes what:
//   board[i]   the leader of ring peer i (relaxed system-scope store after a system-scope fence,
//              which releases what every rank of that GPU did before its device barrier, its
//              puts and ring records to this GPU included); read by this GPU's leader (relaxed
//              polls, then one system-scope fence: acquire)
//
// Why a single word per writer is enough: a leader writes sequence s only after it has seen every
// other leader's word reach s - 1, so a reader finds either s - 1 (not arrived), s (arrived), or
// s + 1 (arrived, passed, and already in the next collective), never further ahead.
#pragma once

#include "dcuda/detail/protocol/peer_ring.h"
#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

inline constexpr std::uint64_t board_word_bytes = 8;
// Set in every word written, so that a zeroed word (nothing written this run) is never a word.
inline constexpr std::uint32_t board_written = 0x80000000u;

// sequence (high 32) | written (1) | call (31).
DCUDA_HD constexpr std::uint64_t encode_board_word(std::uint32_t sequence, std::uint32_t call) {
  return std::uint64_t{sequence} << 32 | board_written | (call & ~board_written);
}
DCUDA_HD constexpr std::uint32_t board_sequence(std::uint64_t word) {
  return static_cast<std::uint32_t>(word >> 32);
}
DCUDA_HD constexpr std::uint32_t board_call(std::uint64_t word) {
  return static_cast<std::uint32_t>(word) & ~board_written;
}

enum class board_verdict : std::uint32_t {
  absent,     // the writer has not entered collective `sequence` yet
  arrived,    // it has entered it (or already left it), with the same call
  mismatched  // it entered collective `sequence` with another call
};

// What the word of another GPU's leader says about collective `sequence`, made here with `call`.
DCUDA_HD constexpr board_verdict read_board_word(std::uint64_t word, std::uint32_t sequence,
                                                 std::uint32_t call) {
  if ((static_cast<std::uint32_t>(word) & board_written) == 0u) return board_verdict::absent;
  const std::uint32_t written = board_sequence(word);
  if (written == sequence) {
    return board_call(word) == call ? board_verdict::arrived : board_verdict::mismatched;
  }
  return reached(written, sequence) ? board_verdict::arrived : board_verdict::absent;
}

// A leader's look at its whole board: which ring peers have arrived (bit i: ring peer i), and the
// first one that entered the collective with another call (-1: none) and that call.
struct board_scan {
  std::uint32_t arrived = 0;
  std::int32_t mismatched_peer = -1;
  std::uint32_t mismatched_call = 0;
};

// `load(i)` reads the word of ring peer i; every word is loaded before any is tested, so the
// loads are in flight together.
template <typename Load>
DCUDA_HD board_scan scan_board(Load&& load, std::uint32_t peers, std::uint32_t sequence,
                               std::uint32_t call) {
  std::uint64_t words[max_peer_gpus];
  for (std::uint32_t i = 0; i < peers && i < max_peer_gpus; ++i) words[i] = load(i);
  board_scan scan;
  for (std::uint32_t i = 0; i < peers && i < max_peer_gpus; ++i) {
    const board_verdict verdict = read_board_word(words[i], sequence, call);
    if (verdict == board_verdict::arrived) scan.arrived |= 1u << i;
    if (verdict == board_verdict::mismatched && scan.mismatched_peer < 0) {
      scan.mismatched_peer = static_cast<std::int32_t>(i);
      scan.mismatched_call = board_call(words[i]);
    }
  }
  return scan;
}

DCUDA_HD constexpr std::uint32_t all_peers_mask(std::uint32_t peers) {
  return peers >= 32u ? ~0u : (1u << peers) - 1u;
}

// The process of ring peer `peer` of process `me` when every process of the job is a peer of
// every other (the only case in which the board is used): the processes in order, less `me`.
DCUDA_HD constexpr std::int32_t board_peer_process(std::uint32_t peer, std::int32_t me) {
  return static_cast<std::int32_t>(peer) < me ? static_cast<std::int32_t>(peer)
                                              : static_cast<std::int32_t>(peer) + 1;
}

// The same numbering for a set: bit i of `peer_bits` (ring peer i) becomes the bit of its process
// (for the watchdog, which names processes).
DCUDA_HD constexpr std::uint32_t board_process_bits(std::uint32_t peer_bits, std::int32_t me) {
  const std::uint32_t below = (1u << me) - 1u;
  return (peer_bits & below) | (peer_bits & ~below) << 1;
}

}  // namespace dcuda::protocol
