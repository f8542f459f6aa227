// Collectives over DCUDA_COMM_WORLD when there is more than one process (thesis 4.2): the
// barriers of dcuda_gpu_init, dcuda_gpu_finish and dcuda_comm_barrier, and window creation and
// release. The ranks of a GPU first meet in a device barrier; then rank 0 hands the collective to
// its host proxy through the command channel and waits for the answer in `world_collective_result`;
// a second device barrier releases the other ranks. The proxies agree through the network engine
// (transport/mpi_engine.h); a collective completes only after every operation sent before it has
// landed, so a world barrier also orders the puts around it.
#pragma once

#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

// Payload of a world_collective message (device rank 0 -> its proxy); aux is the sequence.
struct world_collective_request {
  std::uint32_t call;            // protocol::call (the proxies check they agree)
  std::uint32_t windows_in_use;  // win_create: slots the GPU's ranks use
  std::int32_t slot;             // win_free: the slot
  std::uint32_t pad;
  std::uint32_t generation[max_windows];  // win_create: current generation of every slot
};

// Written by the proxy into mapped host memory; `completed` last, with release.
struct world_collective_result {
  std::uint32_t completed;   // sequence of the last completed collective
  std::int32_t slot;         // win_create: the slot every process agreed on, -1 when none is free
  std::uint32_t generation;  // win_create: the window's generation
  std::uint32_t pad;
};

// What each rank exposes in a dcuda_win_create on DCUDA_COMM_WORLD, read by its proxy (mapped
// host memory, one per rank of the GPU, written by the rank's thread 0 before the first barrier).
struct window_offer {
  std::uint64_t base;
  std::uint64_t size;
};

}  // namespace dcuda::protocol
