// The host side of the collectives over DCUDA_COMM_WORLD that go through the host proxies
// (protocol/world_collective.h, docs/design.md "Collectives over DCUDA_COMM_WORLD"): world
// barriers, window creation and window release. Rank 0 of each GPU hands one over through the
// command channel; the proxy joins the other processes through the network engine's
// announcements (transport/mpi_engine.h), completes it here (window creation builds the window
// table's row and maps the peers' windows) and publishes the result the ranks wait for.
//
// Everything runs on the proxy thread, except waiting_for(), which the watchdog calls.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/remote_operation.h"
#include "dcuda/detail/protocol/world_collective.h"
#include "runtime/channel_consumer.h"
#include "runtime/cuda_memory.h"
#include "runtime/device_buffers.h"
#include "runtime/peer_memory.h"
#include "runtime/process_paths.h"
#include "runtime/shared_memory_mappings.h"
#include "transport/mpi_engine.h"

namespace dcuda::runtime {

class world_collectives {
 public:
  world_collectives(const process_paths& paths, const bootstrap::rank_layout& ranks,
                    const shared_memory_mappings& shared_memory, device_buffers& buffers);
  world_collectives(const world_collectives&) = delete;
  world_collectives& operator=(const world_collectives&) = delete;
  ~world_collectives();

  // A world_collective message of the command channel: the next collective of this GPU's ranks.
  void take(const channel_message& message);

  // Moves the current collective along; true when it completed. It begins only once
  // `earlier_operations_out` (what the ranks issued before it has gone out: the others count it),
  // and completes only once `arrivals_delivered` says that what arrived before it is in the
  // windows (asked after the engine has taken the others' announcements).
  bool advance(transport::mpi_engine& engine, bool earlier_operations_out,
               const std::function<bool()>& arrivals_delivered);

  // Whether an arriving operation must wait: its window is still in creation here while its
  // source already uses it.
  bool holds(const protocol::remote_operation& op) const;

  // This GPU's entry of window `slot` for its rank `device_rank`.
  const protocol::window_entry& own_window(int slot, int device_rank) const;

  // What this process waits for from the others, for the watchdog's report; empty when nothing.
  std::string waiting_for() const;

 private:
  struct in_progress {
    std::uint32_t sequence = 0;
    protocol::world_collective_request request{};
    bool begun = false;
    std::optional<std::vector<transport::mpi_engine::contribution>> contributions;
  };

  std::vector<char> window_contribution() const;
  void complete_window_creation(const std::vector<transport::mpi_engine::contribution>& all,
                                protocol::world_collective_result& result);
  void publish_result(const protocol::world_collective_result& result, std::uint32_t sequence);
  void set_status(std::string status);

  const process_paths& paths_;
  const bootstrap::rank_layout& ranks_;
  const shared_memory_mappings& shared_memory_;
  device_buffers& buffers_;
  world_shape shape_;
  cuda_stream uploads_;                              // window table rows, once per dcuda_win_create
  std::vector<protocol::window_entry> own_windows_;  // [max_windows][device_ranks]
  peer_mappings mapped_windows_;
  std::optional<in_progress> current_;

  mutable std::mutex status_mutex_;
  std::string status_;
};

}  // namespace dcuda::runtime
