// The host-initiated, stream-ordered operations of include/dcuda/host_stream.h, on the paths that
// need no host thread: within this process's GPU and to the processes of its node that it reaches
// by the peer path (CUDA IPC). Each operation becomes work on the caller's stream:
//   put            a copy by the copy engines, into the target's window as mapped here;
//   get            a copy by the copy engines, from the target's window as mapped here (the
//                  peers only: through the network there is nothing mapped to read);
//   notification   a one-thread kernel that adds 1 to the target rank's counter of the tag;
//   put_notify     one kernel that copies the bytes with stores and then counts, below
//                  DCUDA_STREAM_COPY_ENGINE_FROM bytes from memory this GPU reads: one launch
//                  instead of a copy and a launch. Its grid grows with the size (one block up
//                  to single_block_put_limit, then a block per bytes_per_put_block, at most a
//                  block per multiprocessor); the blocks of a multi-block put count their
//                  arrival in their stream's arrival word, and the last to arrive counts the
//                  notification. Larger puts, those from pageable host memory, those above
//                  single_block_put_limit from pinned host memory and those above
//                  misaligned_kernel_put_limit whose source and target differ in their alignment
//                  are a copy and the counting kernel;
//   wait           a stream memory operation that holds the stream until the counter reaches
//                  what the waits queued so far consume (cuStreamWaitValue32, greater or equal,
//                  in 32-bit wraparound);
//   barrier        one kernel that adds 1 to every process's barrier word, then a wait until this
//                  process's word counts every process's arrival at this barrier.
// Where some process is reached through the network, the operations to it, and every barrier, go
// through that path's thread instead (runtime/stream_network.h).
// The kernels may start while the stream's kernel ahead of them still runs (programmatic
// dependent launch) and wait inside for it to complete: back-to-back operations of a stream
// overlap one's launch with the other's work, in the same order.
// So the GPU itself keeps stream order and lets every stream go on as soon as it can: operations
// complete in the order their streams reach them, whatever order the host issued them in.
//
// The counters ([ranks of this process][tag_count] notification counters, then the barrier word)
// are device memory of this GPU, mapped into every process of the node at construction; they
// count from the context's start and are never reset.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "bootstrap/process_layout.h"
#include "dcuda/detail/protocol/host_window_view.h"
#include "runtime/cuda_memory.h"
#include "runtime/host_windows.h"
#include "runtime/peer_memory.h"
#include "runtime/process_paths.h"
#include "runtime/stream_network.h"
#include "runtime/stream_wait_watch.h"

namespace dcuda::runtime {

// What the queued waits of each (rank, tag) of this process consume: a wait needs the counter to
// reach the sum of its count and the counts of the waits queued before it.
class wait_thresholds {
 public:
  explicit wait_thresholds(int ranks);
  // The counter value the next wait of `count` on (rank, tag) needs; that wait is then queued.
  std::uint32_t consume(int local_rank, int tag, int count);

 private:
  std::vector<std::uint32_t> consumed_;  // [ranks][tag_count], wrapping like the counters
};

class stream_operations {
 public:
  // A kernel put of up to this many bytes is one block of put_threads threads: a larger grid
  // copies faster but adds the arrival (a fence and an atomic), which cost more up to here.
  static constexpr std::size_t single_block_put_limit = std::size_t{32} << 10;
  // A larger kernel put takes a block per this many bytes (as many blocks as multiprocessors at
  // most; measured against 16 and 32 KiB, docs/performance.md).
  static constexpr std::size_t bytes_per_put_block = std::size_t{8} << 10;
  // Where source and destination differ in their alignment to 16 bytes, a kernel copies a byte per
  // thread and store: above this size the copy engines are faster.
  static constexpr std::size_t misaligned_kernel_put_limit = std::size_t{32} << 10;

  // Collective over paths.world (every process's first collective host-window call): allocates
  // this GPU's counters and maps those of the peers. `wait_timeout_s`: the watchdog's timeout
  // (0: off); `copy_engine_from`: the size from which a put_notify takes the copy engines;
  // `network_chunk`: the pieces of a put through the network (DCUDA_NETWORK_CHUNK).
  stream_operations(const process_paths& paths, const bootstrap::rank_layout& ranks, int device,
                    double wait_timeout_s, std::size_t copy_engine_from, std::size_t network_chunk);
  // Waits for the GPU's queued work first (the watchdog still watching the waits).
  ~stream_operations();
  stream_operations(const stream_operations&) = delete;
  stream_operations& operator=(const stream_operations&) = delete;

  // This process's ranks' notification counters ([ranks][tag_count]), and how many of their
  // notifications the ranks have consumed in their runs' waits (zero at first; the ranks write
  // it): dcuda_context::host_notifications and host_notifications_taken.
  std::uint32_t* rank_counters() const { return counters_.get(); }
  std::uint32_t* taken_by_ranks() const { return taken_by_ranks_.get(); }
  // The host windows and the ranks' counters as ranks put into them
  // (dcuda_context::host_windows and host_rank_targets, protocol/host_window_view.h).
  const protocol::host_window_entry* ranks_window_view() const { return window_view_.get(); }
  const protocol::host_rank_target* ranks_target_view() const { return target_view_.get(); }

  // This process's host windows and its ranks' counters, for the network proxy of a run.
  host_window_landing landing_view() const { return {own_view_, counters_.get()}; }

  // dcuda_host_win_create and dcuda_host_win_free: collective.
  int create_window(const char* call, void* base, std::size_t size);
  void free_window(const char* call, int handle);

  // A put, then a notification of `tag` when there is one.
  void put(const char* call, int handle, int rank, std::size_t offset, std::size_t size,
           const void* source, std::optional<int> tag, cudaStream_t stream);
  void notify(const char* call, int handle, int rank, int tag, cudaStream_t stream);
  // A copy by the copy engines from the target's window as mapped here (this process and the
  // peers only).
  void get(const char* call, int handle, int rank, std::size_t offset, std::size_t size,
           void* destination, cudaStream_t stream);
  void flush(const char* call, int handle, cudaStream_t stream);
  void wait(const char* call, int rank, int tag, int count, cudaStream_t stream);
  void barrier(const char* call, cudaStream_t stream);

 private:
  // Launches each of the kernels once, on words of their own, and waits for them (lazy loading,
  // compute-sanitizer: a first launch waits for the GPU's running work).
  void launch_each_kernel_once() const;

  // How many bytes from `source` a put_notify kernel on this GPU may read: any from its own
  // memory, single_block_put_limit from mapped pinned host memory, none from pageable host memory
  // (which only the copy engines' path takes).
  std::size_t kernel_readable_bytes(const void* source) const;
  // The process of `rank` and whether this process reaches it without the network; checks rank.
  int target_process(const char* call, int rank) const;
  std::uint32_t* counter_of(int rank, int tag) const;
  // Writes the ranks' view of window `handle` (its entries in window_view_; `window` null: freed).
  void publish_to_ranks(int handle, const host_window* window);
  // The arrival word of `stream`'s multi-block puts (zero between them). A stream runs its
  // kernels one after another, so one word serves all of them; streams are told apart by
  // cudaStreamGetId, which CUDA does not reuse within a context as it may reuse a handle.
  std::uint32_t* arrival_word(cudaStream_t stream);
  // Refuses a stream that is being captured into a graph: the waits' thresholds are fixed when
  // the call is made, and a replayed graph would wait for counts already consumed.
  void check_stream(const char* call, cudaStream_t stream) const;
  // Collective: checks that every process made the same call (`call_id`; and passed the same
  // `value` where `same`); every process's value, in process order.
  std::vector<std::int64_t> agree(const char* call, int call_id, std::int64_t value,
                                  bool same) const;

  const process_paths& paths_;
  const bootstrap::rank_layout& ranks_;
  int device_;
  std::size_t copy_engine_from_;
  unsigned max_put_blocks_;   // the GPU's multiprocessors
  bool flush_remote_writes_;  // the GPU supports CU_STREAM_WAIT_VALUE_FLUSH
  bool early_launch_;         // the GPU has programmatic dependent launch (launch_on_stream)
  device_array<std::uint32_t> counters_;
  device_array<std::uint32_t> taken_by_ranks_;    // [ranks][tag_count], written by the ranks
  peer_mappings mappings_;                        // the peers' counters and windows
  std::vector<std::uint32_t*> process_counters_;  // per process, mapped here; null: not reached
  device_array<std::uint32_t*> barrier_words_;    // every reached process's barrier word
  host_window_table windows_;
  device_array<protocol::host_window_entry> window_view_;  // [host_window_slots][processes]
  device_array<protocol::host_rank_target> target_view_;   // [world_size]
  std::vector<protocol::host_window_entry> own_view_;      // this process's column, on the host
  cuda_stream view_stream_;  // writes the views without waiting for the streams' queued waits
  wait_thresholds thresholds_;
  std::uint32_t barriers_ = 0;  // barriers queued by this process
  // Arrival words, handed out in blocks of arrival_block_words and kept for the context's life:
  // one word (4 bytes) per stream that ever made a multi-block put.
  static constexpr std::size_t arrival_block_words = 256;
  std::vector<device_array<std::uint32_t>> arrival_blocks_;
  std::size_t arrival_words_used_ = 0;                                    // of the last block
  std::unordered_map<unsigned long long, std::uint32_t*> arrival_words_;  // by stream id
  stream_wait_watch watch_;
  // The operations to processes reached through the network, and the barriers, where there are
  // such processes. Last: it ends first, while the counters it counts in still exist.
  std::optional<stream_network> network_;
};

}  // namespace dcuda::runtime
