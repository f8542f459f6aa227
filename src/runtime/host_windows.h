// Host windows (dcuda_host_win_create, include/dcuda/host_stream.h): one buffer per process, known
// to every process by its handle. The table holds, per window, where each process's buffer is
// mapped in this process and how large it is, and makes the checks every host-initiated
// operation makes on its window and target before anything is queued.
//
// Handles are window handles of the device API's form (protocol/window_table.h), with slots from
// host_window_table::first_slot up: a rank that passes one to a device call is refused as a bad
// window instead of reaching another window's memory.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "dcuda/detail/protocol/host_window_view.h"

namespace dcuda::runtime {

struct host_window {
  // Per process: its buffer as mapped in this process (this process's own pointer for itself;
  // null where it exposed nothing or is reached through the network), and its size in bytes.
  std::vector<char*> bases;
  std::vector<std::uint64_t> sizes;
};

// What a run's network proxy needs to land the puts that ranks of other processes make into this
// process's host windows (network_proxy.h): per host window slot, this process's own buffer, its
// size and the window's generation (0: no window in the slot), and the host-initiated
// notification counters of this process's ranks ([ranks][tag_count]), where such a put counts.
// Empty, with no counters, in a context that never made a host window.
struct host_window_landing {
  std::vector<protocol::host_window_entry> own;  // [host_window_slots]
  std::uint32_t* counters = nullptr;
};

class host_window_table {
 public:
  static constexpr int first_slot = protocol::host_window_first_slot;
  static constexpr int slots = protocol::host_window_slots;

  // The handle of a new window; an error (DCUDA_ERROR_INVALID_STATE, naming `call`) when all
  // slots are in use. Every process creates the same windows in the same order, so every process
  // gives the same handle.
  int add(const char* call, host_window window);
  // The window of `handle`; an error naming `call` and the handle unless it is a live host window
  // (never created, freed, a device window's handle).
  const host_window& find(const char* call, int handle) const;
  // Forgets the window of `handle` (checked as by find); its handle is refused afterwards.
  void remove(const char* call, int handle);

 private:
  std::array<std::optional<host_window>, slots> windows_;
  std::array<std::uint32_t, slots> generations_{};  // of the slot's last window; 0: never used
};

// Checks a host-initiated operation's target rank: 0..world_size-1.
void check_target_rank(const char* call, int rank, int world_size);
// Checks that the window of `rank`'s process (`process`) holds [offset, offset + size), and that
// this process reaches it (`reachable`: mapped by the peer path, or carried through the network).
// Errors name `call`, the rank and the bad value.
void check_window_target(const char* call, int handle, const host_window& window, int rank,
                         int process, bool reachable, std::size_t offset, std::size_t size);

// Checks that a get from `rank` (of process `process`) reads memory this process has mapped
// (`mapped`: this process, or a peer reached by the peer path); a process reached only through
// the network has none to read.
void check_get_source(const char* call, int rank, int process, bool mapped);

// Checks a notification's tag (0..255) and, for waits, its count (>= 0).
void check_stream_tag(const char* call, int rank, int tag);
void check_stream_count(const char* call, int rank, int count);

}  // namespace dcuda::runtime
