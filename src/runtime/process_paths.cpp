#include "runtime/process_paths.h"

#include <cstring>
#include <sstream>

#include "bootstrap/mpi_cuda_support.h"
#include "bootstrap/mpi_session.h"
#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

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

// Whether `device` has native atomics in the memory of the GPU at `their_bus_id`, which it reaches
// by the peer path (can_reach). The same GPU always has.
bool native_peer_atomics(int device, const char* their_bus_id) {
  int theirs = -1;
  DCUDA_CUDA_CHECK(cudaDeviceGetByPCIBusId(&theirs, their_bus_id));
  if (theirs == device) return true;
  int native = 0;
  DCUDA_CUDA_CHECK(
      cudaDeviceGetP2PAttribute(&native, cudaDevP2PAttrNativeAtomicSupported, device, theirs));
  return native != 0;
}

}  // namespace

bool process_paths::reach_as_peers(int a, int b) const {
  return peers[static_cast<std::size_t>(a) * routes.size() + static_cast<std::size_t>(b)] != 0;
}

bool process_paths::all_peers() const {
  const int n = process_count();
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b && !reach_as_peers(a, b)) return false;
    }
  }
  return n > 1;
}

bool process_paths::any_peer() const {
  for (const protocol::route route : routes) {
    if (route == protocol::route::peer) return true;
  }
  return false;
}

process_paths lone_process_paths() {
  return {0, {protocol::route::local}, {std::string()}, {0}, {0}, {}, MPI_COMM_NULL, true};
}

process_paths decide_paths(const bootstrap::process_layout& layout, MPI_Comm world, int device,
                           bool force_network) {
  process_card mine{};
  mine.node = layout.node_index;
  mine.force_network = force_network ? 1 : 0;
  DCUDA_CUDA_CHECK(cudaDeviceGetPCIBusId(mine.pci_bus_id, sizeof mine.pci_bus_id, device));
  cudaDeviceProp properties{};
  DCUDA_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  static_assert(sizeof properties.uuid.bytes == sizeof mine.gpu_uuid);
  std::memcpy(mine.gpu_uuid, properties.uuid.bytes, sizeof mine.gpu_uuid);

  std::vector<process_card> cards(static_cast<std::size_t>(layout.process_count));
  DCUDA_MPI_CHECK(
      MPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE, world));
  process_paths paths;
  paths.process_index = layout.process_index;
  paths.world = world;
  paths.routes.assign(cards.size(), protocol::route::network);
  std::vector<bootstrap::gpu_owner> owners;
  for (const process_card& card : cards) {
    owners.push_back(
        {card.node, std::string(reinterpret_cast<const char*>(card.gpu_uuid), sizeof card.gpu_uuid),
         card.pci_bus_id});
  }
  paths.shared_gpu_warning = bootstrap::shared_gpu_warning(owners, layout.process_index);
  for (std::size_t p = 0; p < cards.size(); ++p) {
    const process_card& card = cards[p];
    paths.gpu_names.push_back(std::string("GPU ") + card.pci_bus_id);
    paths.nodes.push_back(card.node);
    if (static_cast<int>(p) == layout.process_index) {
      paths.routes[p] = protocol::route::local;
      continue;
    }
    const bool peer = card.node == layout.node_index && !force_network && card.force_network == 0 &&
                      can_reach(device, card.pci_bus_id);
    if (peer) {
      paths.routes[p] = protocol::route::peer;
      paths.peer_atomics = paths.peer_atomics && native_peer_atomics(device, card.pci_bus_id);
    }
  }
  // The peer path only where both processes chose it: the rings of each process are numbered by
  // its peers, and every process must number them alike.
  const std::size_t n = cards.size();
  std::vector<std::uint8_t> mine_peers(n), all_peers(n * n);
  for (std::size_t p = 0; p < n; ++p) {
    mine_peers[p] = paths.routes[p] == protocol::route::peer ? 1 : 0;
  }
  DCUDA_MPI_CHECK(MPI_Allgather(mine_peers.data(), static_cast<int>(n), MPI_BYTE, all_peers.data(),
                                static_cast<int>(n), MPI_BYTE, world));
  paths.peers.assign(n * n, 0);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      paths.peers[a * n + b] = all_peers[a * n + b] != 0 && all_peers[b * n + a] != 0 ? 1 : 0;
    }
  }
  for (std::size_t p = 0; p < n; ++p) {
    if (paths.routes[p] == protocol::route::peer &&
        !paths.reach_as_peers(layout.process_index, static_cast<int>(p)))
      paths.routes[p] = protocol::route::network;
  }
  return paths;
}

std::string describe_paths(const bootstrap::process_layout& layout, const process_paths& paths,
                           const bootstrap::rank_layout& ranks) {
  std::ostringstream text;
  const auto ranks_text = [&](int p) {
    std::ostringstream out;
    const int count = ranks.ranks_of(p);
    out << count << (count == 1 ? " rank" : " ranks");
    if (count > 0)
      out << " (" << ranks.rank_start(p) << "-" << ranks.rank_start(p) + count - 1 << ")";
    return out.str();
  };
  const int me = layout.process_index;
  text << bootstrap::describe(bootstrap::query_mpi_cuda_support());
  text << "dcuda: process " << me << " of " << layout.process_count << ", node "
       << layout.node_index << ", " << paths.gpu_names[static_cast<std::size_t>(me)] << ", "
       << ranks_text(me) << "\n";
  for (int p = 0; p < layout.process_count; ++p) {
    if (p == me) continue;
    text << "dcuda: process " << me << " -> process " << p << " (node "
         << paths.nodes[static_cast<std::size_t>(p)] << ", "
         << paths.gpu_names[static_cast<std::size_t>(p)] << ", " << ranks_text(p)
         << "): " << protocol::route_name(paths.routes[static_cast<std::size_t>(p)]) << "\n";
  }
  return text.str();
}

}  // namespace dcuda::runtime
