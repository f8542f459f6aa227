// dcuda_state: the per-rank state the thesis puts in shared memory (listing 3.2,
// `__shared__ dcuda_state gst;`). After dcuda_gpu_init (where all threads help to zero it) only
// thread 0 of the rank writes it, always before a block barrier, so the other threads read it
// without atomics.
#pragma once

#include "dcuda/detail/protocol/device_context.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/command_channel.h"
#include "dcuda/detail/protocol/peer_ring.h"

// How a rank reaches a target it sent to last (detail/device/target_route.cuh): the route caches
// of dcuda_put(_notify) and of dcuda_notify each hold one.
struct dcuda_cached_route {
  std::int32_t target;      // world rank; -1: empty
  std::uint32_t path;       // protocol::route to the target
  std::uint32_t* counters;  // the target's notification counters (this GPU; for a put into a
                            // host window, the target rank's host-initiated ones)
  char* ring;               // the target's ring (another GPU of the node)
  std::uint32_t ring_slot;  // this GPU's slot in the target's rings
  std::uint32_t pad;
};

// This rank's own window of DCUDA_COMM_WORLD in one slot, as the peer rings' poll reads it.
struct dcuda_ring_window {
  std::uint64_t base;
  std::uint32_t size;
  std::uint32_t pad;
};

struct dcuda_state {
  // Read by every thread of the rank. The fast path reads only shared memory (plus, when the
  // route cache below misses, the two window entries): the context fields it needs are copied
  // here at dcuda_gpu_init (each hop through the context in global memory would be a dependent
  // L2 round trip, since every acquire load invalidates L1).
  const dcuda_context* ctx;
  std::uint32_t* notifications;              // ctx->device_notifications
  dcuda::protocol::window_entry* windows;    // ctx->windows
  dcuda::protocol::rank_route* rank_routes;  // ctx->rank_routes
  dcuda::protocol::channel_view commands;    // ctx->commands (the network path's latency path)
  std::int32_t device_rank;                  // blockIdx.x
  std::int32_t world_rank;                   // rank_start + blockIdx.x
  std::int32_t rank_start;                   // ctx->rank_start
  std::int32_t world_size;                   // ctx->world_size
  std::int32_t device_ranks;                 // ctx->device_ranks
  std::int32_t process_count;                // ctx->process_count
  std::uint32_t uses_network;                // ctx->uses_network
  std::uint32_t windows_in_use;              // bit per window slot
  std::uint32_t world_windows;               // bit per slot whose window is on DCUDA_COMM_WORLD
  std::int32_t broadcast;                    // result thread 0 hands to the block
  std::uint32_t node_barrier;                // ctx->node_barrier: world barriers meet on the GPUs
  std::uint32_t generation[dcuda::protocol::max_windows];  // current generation of each slot

  // The window entries and route of the last put (target's and own), for the handle and target
  // below.
  // Entries change only through dcuda_win_create/free, which every rank calls together and which
  // give the window a new handle, so a hit needs no global load. Read and written by thread 0
  // before a put's entry barrier (plan_put); read by every thread after it, up to the barrier
  // that ends the put.
  std::int32_t cached_window;  // handle, DCUDA_WIN_NONE when empty
  std::int32_t cached_rank;    // the put's rank argument (in the window's communicator)
  dcuda_cached_route put_route_cache;
  std::uint64_t cached_target_base;
  std::uint64_t cached_target_size;
  std::uint64_t cached_own_base;
  std::uint64_t cached_own_size;

  // Read and written by thread 0 only. Kept apart from the fields above so that the compiler's
  // merged 64-bit loads of neighbouring fields never mix the two groups (racecheck would flag
  // thread 0's stores against the other threads' loads).
  std::uint32_t barrier_episode;    // DCUDA_COMM_DEVICE barriers this rank has entered
  std::uint32_t acks_requested;     // host round trips this rank has started
  std::uint32_t waits_published;    // waits this rank has reported as long
  std::uint32_t record_writes;      // stores of its wait_record (its version field)
  std::uint32_t world_collectives;  // collectives over DCUDA_COMM_WORLD handed to the proxy
  std::uint32_t acks_awaited;       // highest acknowledgement dcuda_win_flush must wait for
  std::uint32_t allocated_windows;  // bit per slot whose memory dcuda_win_allocate took from the
                                    // heap: dcuda_win_free gives it back
  // This rank's heap (dcuda/device/heap.cuh): its allocator, in this GPU's memory, and its
  // segment; null without heaps. Kept here so that an allocation starts with no load of the
  // context.
  dcuda::protocol::buddy_heap* heap;
  char* heap_segment;
  std::uint32_t consumed[dcuda::protocol::tag_count];  // notifications consumed per tag
  dcuda_cached_route notify_route_cache;               // the last dcuda_notify's target
  // This rank's rows of ctx->host_notifications and ctx->host_notifications_taken (null without
  // host windows): host-initiated notifications count in its waits as well.
  std::uint32_t* host_counters;
  std::uint32_t* host_taken;
  // The window and rank of the last get or remote atomic that passed its checks, with that
  // rank's part of the window (its base in this GPU's address space, and its size): a target of
  // this node (detail/device/global_access_path.cuh). Emptied (DCUDA_WIN_NONE, rank -1, size 0)
  // by dcuda_gpu_init and by dcuda_win_free of the window's slot.
  std::int32_t access_window;
  std::int32_t access_rank;
  std::uint64_t access_base;
  std::uint64_t access_size;

  // Peer rings (protocol/peer_ring.h), thread 0 only. Each record taken lowers consumed[tag] by
  // one; counter_acquired[tag] is the sum of the counters (this rank's and its rings') up to
  // which an acquire has made the counted notifications' data visible (records from the rings
  // need none: a fenced one is acquired when it is taken, a carried one brings its data).
  char* rings;                           // this rank's first ring (ring_peers of them, one per GPU)
  std::uint32_t* ring_tails;             // this GPU's tickets, per slot (target)
  const std::uint32_t* ring_taken_here;  // how far each target has taken this GPU's records
  std::uint32_t ring_peers;              // other GPUs of the node (0: no rings)
  std::uint32_t ring_counts;  // 1: notifications may be counted in peers' rings (native atomics)
  // 1 after a plain put to a peer GPU, or a notification counted in a peer's ring: the next
  // record fences (whatever its target: the fence orders those writes before it).
  std::uint32_t peer_fence_owed;
  // The targets whose next record must be fenced, so that they acquire those writes
  // (protocol::owe_acquire): a fence for another target does not make them visible there.
  std::uint32_t peer_acquire_owed;
  // The ring's tail and taken position plan_put peeked for a put_notify to a peer GPU that the
  // whole block copies: kept here across the copy, where registers would spill in 1024-thread
  // ranks.
  std::uint32_t copy_ring_ticket;
  std::uint32_t copy_ring_seen;
  std::uint32_t ring_head[dcuda::protocol::max_peer_gpus];    // next ticket to take, per ring
  std::uint32_t* ring_taken[dcuda::protocol::max_peer_gpus];  // where to publish ring_head
  std::uint32_t counter_acquired[dcuda::protocol::tag_count];
  std::uint32_t ring_windows;  // bit per slot whose window records land in (DCUDA_COMM_WORLD)
  dcuda_ring_window ring_window[dcuda::protocol::max_windows];  // where records land, per slot
};
