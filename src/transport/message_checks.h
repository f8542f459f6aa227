// Validation of everything that crosses a trust boundary into the host runtime: what another
// process sends through the network engine (operation headers, collective announcements, window
// contributions) and what the device writes into the command channel (entries, compact
// operations, collective requests). One function per message kind, shared by every path that
// takes that kind, called before anything is written or indexed.
//
// Each takes the raw bytes as they arrived (so that a fuzzer can call it on anything) and what
// the receiver knows, and returns an empty string for a well-formed message, otherwise a
// description that names the source (process or rank), the message and the bad field with its
// value. The callers throw it as a runtime::error: DCUDA_ERROR_PEER for what another process
// sent, DCUDA_ERROR_INTERNAL for what dcuda's own device code wrote.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "dcuda/detail/protocol/command_channel.h"
#include "dcuda/detail/protocol/host_window_view.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/remote_operation.h"

namespace dcuda::checks {

using bytes = std::span<const std::byte>;

// ---- the network engine's operation header ----

// What the receiver of a header knows. The message is a protocol::remote_operation, followed by
// its payload when that is at most `header_payload_bytes` (the rest comes in chunks).
struct header_limits {
  int source_process = 0;     // who sent it (the MPI source)
  int source_rank_start = 0;  // the sender's world ranks: [start, start + count)
  int source_rank_count = 0;
  int target_rank_start = 0;  // this process's world ranks
  int target_rank_count = 0;
  std::size_t header_payload_bytes = 0;
  std::int64_t max_payload_bytes = 0;  // the largest payload the receiver can stage
};

// The message's length (MPI's count for it) must be exactly what its header says.
std::string check_operation_header(bytes message, const header_limits& limits);
// The fields alone: kind, source within the sender's ranks, target within this process's, tag
// 0..255 for what notifies, no payload on a notify, and for a payload a window slot, an offset
// and a size whose end does not overflow and that the receiver can stage.
std::string check_operation_fields(const protocol::remote_operation& op,
                                   const header_limits& limits);

// A payload chunk of an accepted header (chunks carry no header of their own: the operation's
// header says how many come and how large each is, and MPI keeps them in order). `received`: MPI's
// count for chunk `chunk` (from 0) of `op`, which is due to carry `due` bytes; a chunk that carried
// more than its receive could hold is reported with `received` < 0 (MPI truncated it).
std::string check_payload_chunk(const protocol::remote_operation& op, int source_process,
                                std::size_t chunk, std::size_t chunks, std::int64_t received,
                                std::int64_t due);

// ---- a rank's put into a host window of this process (dcuda/host_stream.h) ----

// Whether `op`, a put or put_notify whose fields check_operation_fields accepted, is for a host
// window: a window slot from protocol::host_window_first_slot on.
bool for_host_window(const protocol::remote_operation& op);
// Such a put from `source_process`: its slot holds a live host window in this process (`own`:
// this process's buffer, size and generation per host window slot, generation 0 where there is
// none) and [offset, offset + size) lies inside that buffer.
std::string check_host_window_put(const protocol::remote_operation& op, int source_process,
                                  std::span<const protocol::host_window_entry> own);

// ---- the network engine's collective announcements ----

// The head of an announcement; the sender's contribution (window entries) follows.
struct announcement_head {
  std::int64_t sequence;      // the collective, counted from 1 on every process
  std::int64_t headers_sent;  // operation headers sent to the receiver before the collective
  std::int32_t call;          // what the sender does (the runtime checks that all agree)
  std::int32_t pad;
};
static_assert(sizeof(announcement_head) == 24);

struct announcement_limits {
  int source_process = 0;
  // Every process announces its collectives in order, one each: from one source only the next
  // sequence is valid. A source can run at most one collective ahead of this process (it cannot
  // finish this process's current one without it), so `expected` is at most `latest`.
  std::int64_t expected_sequence = 1;
  std::int64_t latest_sequence = 1;      // the current collective of this process, plus one
  std::int64_t headers_sent_before = 0;  // what the source's previous announcement counted
};

std::string check_announcement(bytes message, const announcement_limits& limits);

// ---- window-creation contributions (dcuda_win_create over DCUDA_COMM_WORLD) ----

// What each process contributes: this head, then one card per rank of the process.
struct window_contribution_head {
  std::uint32_t windows_in_use;
  std::int32_t ranks;
  std::uint32_t generation[protocol::max_windows];
};
struct window_card {
  std::uint64_t base;  // as the owner sees it; 0 with size 0: the rank offers nothing
  std::uint64_t size;
  std::uint64_t offset;            // of base in the exported allocation
  std::uint64_t allocation_bytes;  // size of the exported allocation
  std::int32_t exported;           // 1: `allocation` is the allocation's IPC handle
  std::int32_t pad;
  cudaIpcMemHandle_t allocation;
};

// `expected_ranks`: the ranks the sender owns (its rank layout). Checks the length, the rank
// count, the generations and every card (check_window_card).
std::string check_window_contribution(bytes contribution, int source_process, int source_rank_start,
                                      int expected_ranks);
// One card of world rank `rank`: no base of 0 with a size, no negative size, no end past 2^64,
// and an exported window inside its allocation.
std::string check_window_card(const window_card& card, int rank);

// ---- command-channel entries (device -> host proxy) ----

struct channel_limits {
  int rank_start = 0;  // world ranks of this GPU: [start, start + count)
  int rank_count = 0;
  std::uint32_t capacity = 0;  // entries in the ring
  int world_size = 0;          // every rank of the job
};

// The first entry of a message (protocol::channel_entry, entry_bytes): known type, producer rank
// within this GPU's ranks, entry count within the ring and within what the type ever needs.
std::string check_channel_entry(bytes entry, const channel_limits& limits);
// A compact operation entry (protocol/compact_operation.h) whose words all carry the sequence in
// word 0: decodes it and checks the operation (check_channel_operation) and the payload size
// (at most compact_payload_bytes).
std::string check_compact_entry(bytes entry, const channel_limits& limits);
// A decoded compact operation's framing: its rank is one of this GPU's, its size at most
// compact_payload_bytes. The command channel's consumer checks this much before it copies the
// payload; the proxy then checks the operation itself (check_channel_operation), as for every
// operation it takes, compact or not.
std::string check_compact_operation(const protocol::remote_operation& op,
                                    const channel_limits& limits);
// An operation a rank of this GPU hands to its proxy: issued by `issuing_rank` (the entry's rank),
// known kind, target within the world, tag 0..255 for what notifies, size 0..2^31-1 (the device
// API's sizes are ints), and offset not negative.
std::string check_channel_operation(const protocol::remote_operation& op, int issuing_rank,
                                    const channel_limits& limits);
// A world_collective message's payload (protocol::world_collective_request) from `rank`: long
// enough, a collective call, generations within 23 bits.
std::string check_collective_request(bytes payload, int rank);

}  // namespace dcuda::checks
