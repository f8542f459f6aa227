#include "runtime/peer_rings.h"

#include <string>

#include "bootstrap/mpi_session.h"
#include "dcuda/detail/protocol/limits.h"
#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

// Collective: whether any process says yes (the processes must agree on a mode that one of them
// may have been given alone, e.g. by an argument).
bool any_process(MPI_Comm world, bool mine) {
  int any = mine ? 1 : 0;
  DCUDA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, world));
  return any != 0;
}

}  // namespace

std::uint32_t ring_geometry::ring_peer_index(int owner, int sender) const {
  std::uint32_t index = 0;
  for (int p = 0; p < sender; ++p) {
    if (paths_.reach_as_peers(owner, p)) ++index;
  }
  return index;
}

std::uint32_t ring_geometry::slot_base(int owner, int target) const {
  std::uint32_t base = 0;
  for (int p = 0; p < target; ++p) {
    if (paths_.reach_as_peers(owner, p)) base += static_cast<std::uint32_t>(ranks_.ranks_of(p));
  }
  return base;
}

protocol::ring_memory_layout ring_geometry::layout(int process) const {
  return {static_cast<std::uint32_t>(ranks_.ranks_of(process)),
          ring_peer_index(process, paths_.process_count()),
          slot_base(process, paths_.process_count())};
}

peer_rings::peer_rings(const process_paths& paths, const bootstrap::rank_layout& ranks,
                       bool host_world_barrier) {
  const ring_geometry geometry(paths, ranks);
  const int me = paths.process_index;
  layout_ = geometry.layout(me);
  counts_ = paths.peer_atomics;
  if (layout_.peer_gpus > protocol::max_peer_gpus) {
    throw dcuda::runtime::error(DCUDA_ERROR_INVALID_STATE,
                                "dcuda_host_init: " + std::to_string(layout_.peer_gpus + 1) +
                                    " GPUs on one node; dcuda supports at most " +
                                    std::to_string(protocol::max_peer_gpus + 1));
  }
  memory_ = device_array<char>(layout_.peer_gpus == 0 ? 0 : layout_.bytes());
  if (paths.process_count() < 2) return;  // alone: nothing to share, nobody to agree with

  const std::vector<mapped_export> exported = exchange_exports(paths, memory_.get(), mappings_);
  mapped_.assign(exported.size(), nullptr);
  for (std::size_t p = 0; p < exported.size(); ++p) {
    if (exported[p].mapped_base != nullptr) {
      mapped_[p] = exported[p].mapped_base + exported[p].offset;
    }
  }
  for (int p = 0; p < paths.process_count(); ++p) {
    if (!paths.reach_as_peers(me, p)) continue;
    char* memory = mapped(p);
    taken_.push_back(memory == nullptr
                         ? nullptr
                         : reinterpret_cast<std::uint32_t*>(memory + geometry.layout(p).taken()) +
                               geometry.slot_base(p, me));
  }
  const bool through_hosts = any_process(paths.world, host_world_barrier);
  if (!paths.all_peers() || through_hosts) return;
  for (int p = 0; p < paths.process_count(); ++p) {
    if (!paths.reach_as_peers(me, p)) continue;
    char* memory = mapped(p);
    if (memory == nullptr)
      throw error("peer_rings: the ring memory of process " + std::to_string(p) + " is not mapped");
    board_out_.push_back(reinterpret_cast<std::uint64_t*>(memory + geometry.layout(p).board()) +
                         geometry.ring_peer_index(p, me));
  }
}

char* peer_rings::mapped(int process) const {
  return mapped_.empty() ? nullptr : mapped_[static_cast<std::size_t>(process)];
}

ring_wiring peer_rings::wiring() const {
  return {layout_, memory_.get(), memory_.size(), taken_, board_out_, counts_};
}

}  // namespace dcuda::runtime
