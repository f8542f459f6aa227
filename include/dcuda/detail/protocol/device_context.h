// The context a dcuda kernel receives (thesis listing 3.4: dcuda_context_handle points to it).
// The host runtime fills it before each launch; the device only reads it. Where each pointer
// lives matters for speed: device memory for what ranks of the GPU touch on the fast path, host
// memory (mapped) for what the host proxy writes or must read while the kernel runs.
#pragma once

#include <cstddef>
#include <initializer_list>

#include "dcuda/version.h"
#include "dcuda/detail/protocol/buddy_heap.h"
#include "dcuda/detail/protocol/delivery_queue.h"
#include "dcuda/detail/protocol/command_channel.h"
#include "dcuda/detail/protocol/error_report.h"
#include "dcuda/detail/protocol/host_window_view.h"
#include "dcuda/detail/protocol/node_barrier.h"
#include "dcuda/detail/protocol/peer_ring.h"
#include "dcuda/detail/protocol/routes.h"
#include "dcuda/detail/protocol/type_table.h"
#include "dcuda/detail/protocol/wait_record.h"
#include "dcuda/detail/protocol/window_table.h"
#include "dcuda/detail/protocol/world_collective.h"

struct dcuda_context {
  // These two stay first in every version of dcuda, so that a kernel compiled against other
  // headers still finds them: the library's protocol::context_layout_stamp, which dcuda_gpu_init
  // compares with the one it was compiled with; and where, on a mismatch, it writes its own
  // stamp (host memory, mapped) before it stops the kernel, for dcuda_host_run to report.
  std::uint32_t layout_stamp;
  std::uint32_t* layout_mismatch;

  // Identity of the ranks on this GPU.
  std::int32_t rank_start;     // world rank of block 0
  std::int32_t world_size;     // ranks in DCUDA_COMM_WORLD
  std::int32_t device_ranks;   // ranks (blocks) on this GPU
  std::int32_t process_count;  // dcuda processes (one per GPU)
  std::int32_t process_index;
  // 1 when some rank is reached through the host proxies: the kernel then has one block more,
  // the delivery agent (device/delivery_agent.cuh).
  std::uint32_t uses_network;

  void* user_data;  // copy of the struct given to dcuda_host_run (device memory)

  // Device memory, written by device atomics.
  std::uint32_t* device_notifications;  // [device_ranks][256]
  // Host-initiated notifications (dcuda/host_stream.h), [device_ranks][256]: the counters the
  // stream-ordered operations of every process add to (from the context's start, this GPU's
  // memory), and how many of them each rank has consumed over every run (the rank's row written
  // by its thread 0 only). Null until the context has a host window.
  std::uint32_t* host_notifications;
  std::uint32_t* host_notifications_taken;
  // The host windows as ranks reach them (protocol/host_window_view.h): [host_window_slots]
  // [process_count] and [world_size], this GPU's memory. Null until the context has a host window.
  const dcuda::protocol::host_window_entry* host_windows;
  const dcuda::protocol::host_rank_target* host_rank_targets;
  std::uint32_t* barrier_arrivals;           // DCUDA_COMM_DEVICE barrier counter
  std::uint32_t* first_error;                // 0 until one thread claims the right to report
  dcuda::protocol::window_entry* windows;    // [max_windows][world_size], by world rank
  dcuda::protocol::rank_route* rank_routes;  // [world_size], written once at dcuda_host_init
  std::uint32_t* finished_ranks;             // ranks past dcuda_gpu_finish: the agent then ends
  // Peer rings (protocol/peer_ring.h): this GPU's ring memory, laid out by ring_memory_layout
  // {device_ranks, ring_peers, ring_slots}; per ring (sending GPU), where rank 0 of this GPU
  // publishes how far it has taken it (rank r at + r), in that GPU's memory. Null, 0 without
  // other processes on the node.
  char* ring_memory;
  std::uint32_t** ring_taken;
  std::uint32_t ring_peers;
  std::uint32_t ring_slots;
  // 1 when this GPU has native atomics in every peer GPU's memory: a put_notify of more than
  // ring_carry_limit bytes may then count its notification in the target's ring (peer_ring.h).
  std::uint32_t ring_counts;
  // The world barrier within a node (protocol/node_barrier.h): 1 when every process reaches every
  // other by the peer path, so that barriers of DCUDA_COMM_WORLD meet on the GPUs; then, per ring
  // peer, where this GPU's leader writes its word in that GPU's board (mapped), and this GPU's own
  // board (inside ring_memory). 0 and null otherwise.
  std::uint32_t node_barrier;
  std::uint64_t** board_out;
  std::uint64_t* board;

  // Host memory mapped into the device.
  std::uint32_t* host_acks;                    // [device_ranks], operations the proxy has answered
  std::uint32_t* abort_requested;              // set by the host watchdog: waiting ranks stop
  dcuda::protocol::wait_record* wait_records;  // [device_ranks]
  dcuda::protocol::error_report* error;        // the first misuse found on this GPU
  dcuda::protocol::channel_view commands;      // timers, pings (and remote operations later)
  dcuda::protocol::channel_view logs;          // dcuda_log lines
  dcuda::protocol::world_collective_result* collective_result;  // written by the host proxy
  dcuda::protocol::window_offer* window_offers;                 // [device_ranks], read by it
  dcuda::protocol::delivery_queue*
      delivery_queue;  // the proxy's jobs for the agent; null: no agent

  std::uint64_t report_wait_after_ns;  // a wait spinning this long publishes its wait_record
  // Every window slot's generation before this run's first dcuda_win_create: different in every
  // run (protocol::first_window_generation), so that handles of earlier runs are refused.
  std::uint32_t first_window_generation;
  // The process's committed datatypes as this GPU reads them (the typed calls, dcuda_pack).
  const dcuda::protocol::type_entry* types;
  // The rank heaps (protocol/heap_layout.h): this GPU's segments, [device_ranks] of 2^heap_order
  // bytes, and each rank's allocator, whose bookkeeping (this GPU's memory) its thread 0 alone
  // reads and writes, kept across the runs of a host context. heap_order 0: no heaps.
  char* heap;
  dcuda::protocol::buddy_heap* heaps;
  std::uint32_t heap_order;
};

namespace dcuda::protocol {

// A stamp of the memory the host library and a kernel's dcuda calls share: the version, the sizes
// and limits of everything laid out above, and shared_encoding_revision. A kernel compiled against
// the headers of another build (an older install, a copy of the headers beside a newer library)
// would read this memory at the wrong places and hang or corrupt it; dcuda_gpu_init compares
// stamps and stops instead.
constexpr std::uint32_t layout_stamp_of(std::initializer_list<std::uint64_t> values) {
  std::uint32_t hash = 2166136261u;  // FNV-1a over the values' bytes
  for (const std::uint64_t value : values) {
    for (int byte = 0; byte < 8; ++byte) {
      hash = (hash ^ static_cast<std::uint32_t>((value >> (8 * byte)) & 0xffu)) * 16777619u;
    }
  }
  return hash == 0u ? 1u : hash;  // 0 means "no mismatch" in layout_mismatch
}

// Counts the changes to what the kernel's headers and the library encode alike without a size
// above showing it: a field's place in a command entry or a delivery job, an error code's number.
// Raised with each such change, so that the stamp tells the two builds apart.
inline constexpr std::uint64_t shared_encoding_revision = 2;

inline constexpr std::uint32_t context_layout_stamp = layout_stamp_of({
    DCUDA_VERSION,
    shared_encoding_revision,
    sizeof(dcuda_context),
    sizeof(window_entry),
    sizeof(rank_route),
    sizeof(wait_record),
    sizeof(error_report),
    sizeof(channel_entry),
    sizeof(delivery_queue),
    sizeof(type_entry),
    sizeof(buddy_heap),
    sizeof(world_collective_result),
    sizeof(window_offer),
    sizeof(host_window_entry),
    sizeof(host_rank_target),
    static_cast<std::uint64_t>(host_window_first_slot),
    static_cast<std::uint64_t>(tag_count),
    static_cast<std::uint64_t>(max_windows),
    ring_slots,
    ring_record_bytes,
    ring_bytes,
    static_cast<std::uint64_t>(ring_carry_limit),
    max_peer_gpus,
    board_word_bytes,
});

static_assert(offsetof(dcuda_context, layout_stamp) == 0 &&
                  offsetof(dcuda_context, layout_mismatch) == 8,
              "the layout stamp and its answer stay first in every version");

}  // namespace dcuda::protocol
