// Per-rank diagnostics of a wait that is taking long. The rank (thread 0) writes its record into
// host memory only after a wait has spun for a while, so fast waits cost nothing; the host
// watchdog reads the records and reports ranks whose record has not changed for the timeout.
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

enum class wait_kind : std::uint32_t {
  none,              // not waiting (or waiting too briefly to say)
  notifications,     // detail: tag; needed / available notifications
  barrier,           // detail: episode; needed = participants, available = arrived
  channel_room,      // detail: channel; waiting for the host to drain the device->host channel
  host_ack,          // detail: operation; waiting for the host proxy to answer
  finished,          // the rank returned from dcuda_gpu_finish
  world_collective,  // detail: sequence; rank 0 waits for the other processes (via its proxy)
  ring_room,         // detail: target slot; needed: ticket; a peer's ring is full (not taken)
  node_barrier,      // detail: sequence; rank 0 waits for the other GPUs' leaders on the device
                     // (protocol/node_barrier.h); needed / available: bit per process
};

struct wait_record {
  std::uint32_t version;    // incremented (release) after every rewrite of the fields below
  std::uint32_t kind;       // wait_kind
  std::uint32_t call_id;    // protocol::call that waits
  std::int32_t detail;      // tag, episode or channel, by kind
  std::uint32_t needed;     // what the wait needs
  std::uint32_t available;  // what it has seen so far
  std::uint32_t started;    // count of waits this rank has published (tells two waits apart)
  std::uint32_t pad;
};

}  // namespace dcuda::protocol
