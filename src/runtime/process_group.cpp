#include "runtime/process_group.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "bootstrap/mpi_cuda_support.h"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/peer_ring.h"
#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

// Variables that MPI launchers set in the processes they start.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                           "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

// MPI stays initialised for the life of the process: a program may create several dcuda
// contexts one after the other, and MPI cannot be initialised twice.
bootstrap::mpi_session& shared_mpi_session() {
  static bootstrap::mpi_session session(nullptr, nullptr);
  return session;
}

// What processes tell each other about themselves at dcuda_host_init.
struct process_card {
  std::int32_t node;
  std::int32_t force_network;
  char pci_bus_id[32];
  unsigned char gpu_uuid[16];  // tells two processes on one GPU apart from two on MIG slices of it
};

bool can_reach(int device, const char* their_bus_id) {
  int theirs = -1;
  if (cudaDeviceGetByPCIBusId(&theirs, their_bus_id) != cudaSuccess) {
    cudaGetLastError();  // not visible to this process: no peer path
    return false;
  }
  if (theirs == device) return true;  // two processes on one GPU share it through IPC
  int can = 0;
  DCUDA_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, theirs));
  return can != 0;
}

}  // namespace

std::unique_ptr<process_group> process_group::join_if_launched() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised && !started_by_mpi_launcher()) return nullptr;
  shared_mpi_session();
  return std::make_unique<process_group>(bootstrap::discover_layout(MPI_COMM_WORLD));
}

void process_group::share_rank_counts(int device_ranks) {
  ranks_ = bootstrap::exchange_rank_counts(MPI_COMM_WORLD, device_ranks);
}

void process_group::decide_paths(int device, bool force_network) {
  process_card mine{};
  mine.node = layout_.node_index;
  mine.force_network = force_network ? 1 : 0;
  DCUDA_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.pci_bus_id, sizeof mine.pci_bus_id, device));
  cudaDeviceProp properties{};
  DCUDA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  static_assert(sizeof properties.uuid.bytes == sizeof mine.gpu_uuid);
  std::memcpy(mine.gpu_uuid, properties.uuid.bytes, sizeof mine.gpu_uuid);

  std::vector<process_card> cards(static_cast<std::size_t>(layout_.process_count));
  DCUDA_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE,
                                MPI_COMM_WORLD));
  routes_.assign(cards.size(), protocol::route::network);
  gpu_names_.clear();
  nodes_.clear();
  std::vector<bootstrap::gpu_owner> owners;
  for (const process_card& card : cards) {
    owners.push_back(
        {card.node, std::string(reinterpret_cast<const char*>(card.gpu_uuid), sizeof card.gpu_uuid),
         card.pci_bus_id});
  }
  shared_gpu_warning_ = bootstrap::shared_gpu_warning(owners, layout_.process_index);
  for (std::size_t p = 0; p < cards.size(); ++p) {
    const process_card& card = cards[p];
    gpu_names_.push_back(std::string("GPU ") + card.pci_bus_id);
    nodes_.push_back(card.node);
    if (static_cast<int>(p) == layout_.process_index) {
      routes_[p] = protocol::route::local;
      continue;
    }
    const bool peer = card.node == layout_.node_index && !force_network &&
                      card.force_network == 0 && can_reach(device, card.pci_bus_id);
    if (peer) routes_[p] = protocol::route::peer;
  }
  // The peer path only where both processes chose it: the rings of each process are numbered by
  // its peers, and every process must number them alike.
  const std::size_t n = cards.size();
  std::vector<std::uint8_t> mine_peers(n), all_peers(n * n);
  for (std::size_t p = 0; p < n; ++p) mine_peers[p] = routes_[p] == protocol::route::peer ? 1 : 0;
  DCUDA_MPI_CHECK(MPI_Allgather(mine_peers.data(), static_cast<int>(n), MPI_BYTE, all_peers.data(),
                                static_cast<int>(n), MPI_BYTE, MPI_COMM_WORLD));
  peers_.assign(n * n, 0);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      peers_[a * n + b] = all_peers[a * n + b] != 0 && all_peers[b * n + a] != 0 ? 1 : 0;
    }
  }
  for (std::size_t p = 0; p < n; ++p) {
    if (routes_[p] == protocol::route::peer && !peers(layout_.process_index, static_cast<int>(p)))
      routes_[p] = protocol::route::network;
  }
}

std::vector<process_group::mapped_export> process_group::exchange_exports(
    const void* pointer, peer_mappings& mappings) const {
  struct export_card {
    cudaIpcMemHandle_t handle;
    std::uint64_t base;    // of the allocation, in the exporting process; 0: nothing offered
    std::uint64_t offset;  // of the pointer in the allocation
  };
  export_card mine{};
  if (pointer != nullptr) {
    const exported_memory exported = export_memory(pointer);
    mine.handle = exported.handle;
    mine.base = reinterpret_cast<std::uint64_t>(pointer) - exported.offset;
    mine.offset = exported.offset;
  }
  std::vector<export_card> cards(static_cast<std::size_t>(layout_.process_count));
  DCUDA_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE,
                                MPI_COMM_WORLD));
  std::vector<mapped_export> mapped(cards.size());
  for (std::size_t p = 0; p < cards.size(); ++p) {
    if (routes_[p] != protocol::route::peer || cards[p].base == 0) continue;
    mapped[p] = {mappings.open(static_cast<int>(p), cards[p].handle), cards[p].base,
                 cards[p].offset};
  }
  return mapped;
}

void process_group::share_memory(const void* allocation) {
  const std::vector<mapped_export> mapped = exchange_exports(allocation, mapped_shared_);
  for (std::size_t p = 0; p < mapped.size(); ++p) {
    if (mapped[p].mapped_base != nullptr) {
      shared_[{static_cast<int>(p), mapped[p].exporter_base}] = mapped[p].mapped_base;
    }
  }
}

char* process_group::shared_mapping(int process, std::uint64_t exporter_base) const {
  const auto found = shared_.find({process, exporter_base});
  return found == shared_.end() ? nullptr : found->second;
}

bool process_group::peers(int a, int b) const {
  return peers_[static_cast<std::size_t>(a) * nodes_.size() + static_cast<std::size_t>(b)] != 0;
}

std::uint32_t process_group::ring_peer_index(int owner, int sender) const {
  std::uint32_t index = 0;
  for (int p = 0; p < sender; ++p) {
    if (peers(owner, p)) ++index;
  }
  return index;
}

std::uint32_t process_group::slot_base(int owner, int target) const {
  std::uint32_t base = 0;
  for (int p = 0; p < target; ++p) {
    if (peers(owner, p)) base += static_cast<std::uint32_t>(ranks_.ranks_of(p));
  }
  return base;
}

protocol::ring_memory_layout process_group::ring_layout(int process) const {
  return {static_cast<std::uint32_t>(ranks_.ranks_of(process)),
          ring_peer_index(process, layout_.process_count),
          slot_base(process, layout_.process_count)};
}

void process_group::share_rings(char* ring_memory) {
  const std::vector<mapped_export> mapped = exchange_exports(ring_memory, mapped_rings_);
  ring_memory_.assign(mapped.size(), nullptr);
  for (std::size_t p = 0; p < mapped.size(); ++p) {
    if (mapped[p].mapped_base != nullptr) {
      ring_memory_[p] = mapped[p].mapped_base + mapped[p].offset;
    }
  }
}

char* process_group::mapped_rings(int process) const {
  return ring_memory_.empty() ? nullptr : ring_memory_[static_cast<std::size_t>(process)];
}

std::vector<std::uint32_t*> process_group::ring_taken() const {
  const int me = layout_.process_index;
  std::vector<std::uint32_t*> taken;
  for (int p = 0; p < layout_.process_count; ++p) {
    if (!peers(me, p)) continue;
    char* memory = mapped_rings(p);
    taken.push_back(memory == nullptr
                        ? nullptr
                        : reinterpret_cast<std::uint32_t*>(memory + ring_layout(p).taken()) +
                              slot_base(p, me));
  }
  return taken;
}

bool process_group::all_peers() const {
  const int n = layout_.process_count;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b && !peers(a, b)) return false;
    }
  }
  return n > 1;
}

bool process_group::any_process(bool mine) const {
  int any = mine ? 1 : 0;
  DCUDA_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
  return any != 0;
}

std::vector<std::uint64_t*> process_group::board_out() const {
  const int me = layout_.process_index;
  std::vector<std::uint64_t*> out;
  for (int p = 0; p < layout_.process_count; ++p) {
    if (!peers(me, p)) continue;
    char* memory = mapped_rings(p);
    if (memory == nullptr)
      throw error("process_group: the ring memory of process " + std::to_string(p) +
                  " is not mapped");
    out.push_back(reinterpret_cast<std::uint64_t*>(memory + ring_layout(p).board()) +
                  ring_peer_index(p, me));
  }
  return out;
}

std::vector<protocol::rank_route> process_group::rank_routes(std::uint32_t* own_counters) const {
  std::vector<protocol::rank_route> routes(static_cast<std::size_t>(ranks_.world_size()));
  const int me = layout_.process_index;
  for (int p = 0; p < layout_.process_count; ++p) {
    char* memory = mapped_rings(p);
    for (int r = 0; r < ranks_.ranks_of(p); ++r) {
      protocol::rank_route& route = routes[static_cast<std::size_t>(ranks_.rank_start(p) + r)];
      route.path = static_cast<std::uint32_t>(routes_[static_cast<std::size_t>(p)]);
      if (p == me) route.counters = own_counters + r * protocol::tag_count;
      if (memory != nullptr) {
        route.ring =
            memory + ring_layout(p).ring(static_cast<std::uint32_t>(r), ring_peer_index(p, me));
        route.slot = slot_base(me, p) + static_cast<std::uint32_t>(r);
      }
    }
  }
  return routes;
}

std::string process_group::describe_paths() const {
  std::ostringstream text;
  const auto ranks_text = [&](int p) {
    std::ostringstream out;
    const int count = ranks_.ranks_of(p);
    out << count << (count == 1 ? " rank" : " ranks");
    if (count > 0)
      out << " (" << ranks_.rank_start(p) << "-" << ranks_.rank_start(p) + count - 1 << ")";
    return out.str();
  };
  const int me = layout_.process_index;
  text << bootstrap::describe(bootstrap::query_mpi_cuda_support());
  text << "dcuda: process " << me << " of " << layout_.process_count << ", node "
       << layout_.node_index << ", " << gpu_names_[static_cast<std::size_t>(me)] << ", "
       << ranks_text(me) << "\n";
  for (int p = 0; p < layout_.process_count; ++p) {
    if (p == me) continue;
    text << "dcuda: process " << me << " -> process " << p << " (node "
         << nodes_[static_cast<std::size_t>(p)] << ", " << gpu_names_[static_cast<std::size_t>(p)]
         << ", " << ranks_text(p)
         << "): " << protocol::route_name(routes_[static_cast<std::size_t>(p)]) << "\n";
  }
  return text.str();
}

}  // namespace dcuda::runtime
