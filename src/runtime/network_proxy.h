// The host proxy's network side for one run (thesis 4.2; docs/design.md "Across GPUs and
// nodes"): operations of this GPU's ranks for ranks reached through the network, operations that
// arrive for this GPU's ranks, and the collectives over DCUDA_COMM_WORLD, which it moves along
// (runtime/world_collectives.h).
//
// The proxy itself makes no CUDA calls while the kernel runs (each would cost about a microsecond
// per resident block, protocol/delivery_queue.h): the delivery agent, one block of the kernel, does
// its copies. Outgoing, in the order the ranks issued them: a payload that came inline in the
// command channel is ready at once; a larger one is copied out of the device into pinned memory
// in pieces of one engine chunk, each posted as soon as its copy is done (so copy and transfer
// overlap), and the rank's acknowledgement (dcuda_win_flush) is stored once the last piece is
// out. Incoming: the engine receives into pinned memory; the agent copies the payload into the
// window and then adds the notification, so the counter never runs ahead of the data.
//
// A typed put goes the same way in pieces of the packed stream (protocol/typed_piece.h): the
// agent packs each piece into staging, and the receiver's agent unpacks it into the window with
// the target's layout, which the proxy sends each process once per run, before the first piece
// that needs it.
//
// Everything runs on the proxy thread, except waiting_for(), which the watchdog calls.
#pragma once

#include <deque>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "dcuda/datatype.h"
#include "dcuda/detail/protocol/typed_piece.h"

#include "runtime/delivery_jobs.h"
#include "runtime/channel_consumer.h"
#include "runtime/device_buffers.h"
#include "runtime/host_windows.h"
#include "runtime/network_trace.h"
#include "runtime/pinned_pool.h"
#include "runtime/process_paths.h"
#include "runtime/received_layouts.h"
#include "runtime/shared_memory_mappings.h"
#include "runtime/world_collectives.h"
#include "transport/mpi_engine.h"

namespace dcuda::runtime {

class network_proxy final : public transport::delivery {
 public:
  // `outgoing` and `incoming`: pinned staging for each direction, kept apart so that buffers
  // waiting for a send to complete never starve the receives that let other processes go on.
  // `layouts`: pinned memory for the target layouts other processes send (received_layouts.h).
  // `trace_prefix`: DCUDA_NETWORK_TRACE (empty: off). `chunk_bytes`: DCUDA_NETWORK_CHUNK, the
  // stage of the pipeline: a staged payload goes out in pieces of this size, each one engine chunk.

  // `paths`, `ranks`, `shared_memory`: what dcuda_host_init and dcuda_host_share_memory set up.
  // `host_windows`: this process's host windows, where ranks of other processes put too.
  network_proxy(const process_paths& paths, const bootstrap::rank_layout& ranks,
                const shared_memory_mappings& shared_memory, device_buffers& buffers,
                pinned_pool& outgoing, pinned_pool& incoming, pinned_pool& layouts,
                host_window_landing host_windows, const std::string& trace_prefix,
                std::size_t chunk_bytes);
  network_proxy(const network_proxy&) = delete;
  network_proxy& operator=(const network_proxy&) = delete;
  ~network_proxy() override = default;

  // Command-channel messages: remote_operation, world_collective, and pings (answered in order
  // with the acknowledgements of staged operations).
  void take_operation(const channel_message& message);
  void take_world_collective(const channel_message& message);
  void take_ping(int world_rank, std::uint32_t acknowledgement);

  // Whether the proxy takes the next command-channel message: not while operations wait for
  // staging buffers (they go out in the order the ranks issued them).
  bool accepting() const { return waiting_.empty(); }

  // Moves everything along; true when anything happened.
  bool progress();

  // What this process waits for from the others, for the watchdog's report; empty when nothing.
  std::string waiting_for() const;

  // transport::delivery
  bool ready_for(const protocol::remote_operation& op) override;
  void* landing_address(const protocol::remote_operation& op) override;
  std::string refusal(const protocol::remote_operation& op) const override;
  void landed(const protocol::remote_operation& op, void* landing) override;
  void sent(const protocol::remote_operation& op) override;
  // Every operation a proxy posts is at most one staging piece (admit_waiting splits larger
  // ones), far below the incoming staging arena (host_context's staging_bytes); a larger one
  // would wait for staging forever.
  std::int64_t largest_payload() const override;

 private:
  struct outgoing_step {
    protocol::remote_operation op{};
    pinned_pool::buffer payload;  // staged; empty when the payload is in `header_payload`
    std::string header_payload;   // up to mpi_engine::header_payload_bytes: the engine copies it
    std::optional<std::uint32_t> copy_job;  // staged: the agent's copy out of the device
    int device_rank = 0;
    std::uint32_t acknowledgement = 0;  // stored into host_acks once posted (0: none)
    bool post = true;                   // false: a ping, only acknowledged
    // A typed piece: its wire header, written over the agent's typed_piece_job once it packed.
    std::optional<protocol::typed_piece_header> piece_header;
  };
  struct typed_outgoing {             // what a typed put needs beyond a put
    std::uint64_t source_layout = 0;  // device address of the source type's layout
    dcuda_datatype target_type{};
    std::vector<char> encoded_layout;  // the target layout, for a process that has not had it
    std::size_t layout_next = 0;       // its bytes already given to parts
    std::size_t pieces = 0;            // pieces already queued
  };
  struct waiting_operation {  // taken from the channel, not yet given buffers
    protocol::remote_operation op{};
    std::uint64_t source = 0;  // device address of a staged payload
    std::string inline_payload;
    std::size_t next = 0;  // staged: bytes already given to copies
    std::optional<typed_outgoing> typed;
  };
  struct delivery_step {
    std::uint32_t job;  // the agent's copy into the window
    pinned_pool::buffer payload;
  };
  bool admit_waiting();
  // A typed put's layout parts and pieces; false while staging or agent jobs are short.
  bool admit_typed(waiting_operation& waiting, int device_rank);
  void take_typed_request(waiting_operation& waiting, const channel_message& message);
  void land_layout_part(const protocol::remote_operation& op, void* landing);
  void land_typed_piece(const protocol::remote_operation& op, void* landing,
                        protocol::job_count counter);
  bool post_ready();
  bool finish_deliveries();
  static bool lands_small(const protocol::remote_operation& op);
  // This process's host window that `op` puts into (checks::check_host_window_put passed).
  const protocol::host_window_entry& own_host_window(const protocol::remote_operation& op) const;
  // Where an accepted payload lands: a small landing or pinned staging.
  void* take_landing(const protocol::remote_operation& op);

  const std::size_t piece_bytes_;  // a staged payload's pieces: one engine chunk each
  device_buffers& buffers_;
  world_shape shape_;
  bootstrap::rank_layout ranks_;
  pinned_pool& outgoing_pool_;
  pinned_pool& incoming_pool_;
  delivery_jobs agent_;
  std::uint32_t reserved_jobs_ = 0;  // queue slots set aside for accepted incoming operations

  std::deque<waiting_operation> waiting_;
  std::deque<outgoing_step> to_post_;
  // Posted payloads, until sent() (posting order; empty where the header carried the payload).
  std::deque<pinned_pool::buffer> in_flight_;
  std::unordered_map<void*, pinned_pool::buffer> landings_;
  // Where payloads of up to delivery_inline_bytes land: they go on inside the agent's job, so they
  // need no pinned staging, nor a node in landings_. One slot per job the agent's queue holds
  // (ready_for sets a job aside for every operation it accepts, so no more are ever in use),
  // handed out from a free list.
  std::vector<std::uint64_t> small_landings_;
  std::vector<std::uint32_t> free_small_landings_;
  std::deque<delivery_step> delivering_;
  // Target layouts sent, by process, type id and generation (each goes once per run), and those
  // received.
  std::set<std::tuple<int, std::uint32_t, std::uint32_t>> layouts_sent_;
  received_layouts layouts_received_;
  host_window_landing host_windows_;
  world_collectives collectives_;

  network_trace trace_;
  transport::mpi_engine engine_;  // last: destroyed first, while the buffers it uses still exist
};

}  // namespace dcuda::runtime
