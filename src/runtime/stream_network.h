// The stream-ordered operations of include/dcuda/host_stream.h for targets that this process
// reaches through the network (another node, or DCUDA_FORCE_NETWORK=1): a host thread of the
// process carries them over MPI, on dcuda's own duplicate of the world communicator.
//
// Each operation takes a slot of two words of mapped page-locked memory and a sequence number.
// On the caller's stream it becomes:
//   the ready word        cuStreamWriteValue32 of the sequence number, once the stream's earlier
//                         work is done: the thread sees that the operation may start;
//   the released word     cuStreamWaitValue32 until the thread has written the sequence number
//                         there: a put holds its stream until its payload has been read (so the
//                         stream's later work may change the source), a flush until the targets
//                         have acknowledged the puts this process sent before it, a barrier until
//                         every other process's arrival has been counted. A notification does not
//                         hold its stream.
// The target acknowledges every put and notification once applied, so that a flush, and
// dcuda_host_win_free, know when nothing is on its way into a window any more.
// The thread starts operations as their streams reach them, in whatever order the streams do
// (completion order, not issue order), but keeps each stream's own order. A put's payload goes
// out in pieces of the network chunk through pinned staging: the copy of one piece out of the GPU
// overlaps the transfer of the one before. The receiving process's thread copies each piece into
// its window, counts the notification with a one-thread kernel after the last piece, and
// acknowledges the put (stream_network_messages.h has the messages and their checks).
//
// Concurrency: the program's thread queues operations and creates and frees windows; the
// network thread does everything else. `mutex_` guards what they share (the submitted operations,
// the slots, this process's windows). MPI is called from both (window collectives on the world
// communicator, the network on its own), which needs MPI_THREAD_MULTIPLE.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/mpi_session.h"
#include "bootstrap/process_layout.h"
#include "runtime/cuda_memory.h"
#include "runtime/process_paths.h"
#include "runtime/stream_network_messages.h"
#include "runtime/stream_wait_watch.h"

namespace dcuda::runtime {

class stream_network {
 public:
  // The counter of (rank, tag) of this process, and a kernel launch that adds one to a counter on
  // a stream (stream_operations' own).
  using counter_function = std::function<std::uint32_t*(int rank, int tag)>;
  using count_function = std::function<void(std::uint32_t* counter, cudaStream_t stream)>;

  // Operations queued and not yet finished by the thread, at most: a call beyond waits for the
  // oldest (its stream must reach it first), up to the watchdog's timeout.
  static constexpr std::uint32_t operation_slots = 65536;
  // Pinned buffers of one network chunk for each direction.
  static constexpr int staging_buffers = 4;

  // Collective over paths.world. Refuses (DCUDA_ERROR_MPI) where MPI gives less than
  // MPI_THREAD_MULTIPLE.
  stream_network(const process_paths& paths, const bootstrap::rank_layout& ranks, int device,
                 std::size_t chunk_bytes, double wait_timeout_s, bool flush_remote_writes,
                 stream_wait_watch& watch, counter_function counter_of, count_function count);
  // Collective (dcuda_host_finish): the GPU's queued work must be done. Every process tells the
  // others it sends nothing more, and the thread ends once it has heard the same from all.
  ~stream_network();
  stream_network(const stream_network&) = delete;
  stream_network& operator=(const stream_network&) = delete;

  // This process's part of host window `handle`, for the puts that arrive (size 0: none).
  void expose_window(int handle, char* base, std::uint64_t size);
  void forget_window(int handle);

  // A put of `size` bytes from `source` to `offset` of window `handle` at `rank` of `process`,
  // then a notification of `tag` where tag >= 0. Checked by the caller.
  void put(const char* call, int rank, int process, int handle, std::uint64_t offset,
           std::uint64_t size, const void* source, int tag, cudaStream_t stream);
  // Holds `stream` until every put this process has sent through the network is in its window.
  void flush(const char* call, cudaStream_t stream);
  // The n-th barrier of this process meets the n-th of every other.
  void barrier(const char* call, cudaStream_t stream);
  // Returns once every put this process has sent is acknowledged (dcuda_host_win_free); the
  // GPU's queued work must be done.
  void wait_until_acknowledged(const char* call);

 private:
  enum class operation_kind { put, notify, flush, barrier };
  struct operation {
    operation_kind kind = operation_kind::put;
    std::uint32_t sequence = 0;
    std::uint32_t slot = 0;
    unsigned long long stream_id = 0;
    int process = -1;       // put, notify: the target process
    stream_message header;  // put, notify
    const char* source = nullptr;
    bool header_sent = false;  // put: its header has gone out
    std::uint64_t staged = 0;  // put: bytes sent so far
    std::uint64_t barrier_number = 0;
    std::vector<std::uint64_t> needed;  // flush: acknowledgements it waits for, per process
  };
  struct pending_send {
    stream_message header;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  struct staging_buffer {
    mapped_array<char> bytes;
    MPI_Request request = MPI_REQUEST_NULL;  // the send or receive that uses it
    // Outgoing: until its send is complete. Incoming: from its receive's posting until its piece
    // is copied into the window (the receive completes before that, so the request alone does
    // not say whether the bytes are still needed).
    bool in_use = false;
  };
  struct incoming_message {
    stream_message header;
    char* destination = nullptr;  // put: where its payload goes
  };
  struct incoming_put {
    std::uint64_t received = 0;
    int buffer = -1;  // the staging buffer of the piece on its way
    std::uint64_t piece = 0;
  };

  // Called by the program's thread.
  operation begin(const char* call, operation_kind kind, cudaStream_t stream);
  void submit(operation op, cudaStream_t stream, bool stream_waits);

  // The thread's loop and its steps; each returns whether it did anything.
  void serve();
  bool poll();
  bool take_ready();
  void start(operation op);
  static const char* kind_name(operation_kind kind);
  // A flush or a barrier whose turn has come: the acknowledgements it needs, or its arrival sent
  // to every other process; then it waits in waiting_.
  void start_wait(operation op);
  bool send_outgoing();
  bool receive_headers();
  bool apply_incoming();
  bool finish_waits();
  bool complete_sends();
  bool close_when_asked();
  void release(const operation& op);
  void send_header(int process, const stream_message& header);
  // Sends the header of a put or notification, which its target acknowledges.
  void send_acknowledged(const operation& op);
  // A staging buffer that is not in use (an outgoing one whose send has completed is no longer),
  // marked in use; -1 when all are.
  int take_buffer(std::vector<staging_buffer>& buffers, bool outgoing);

  const process_paths& paths_;
  const bootstrap::rank_layout& ranks_;
  int device_;
  std::size_t chunk_bytes_;
  double wait_timeout_s_;
  bool flush_remote_writes_;
  stream_wait_watch& watch_;
  counter_function counter_of_;
  count_function count_;
  bootstrap::mpi_communicator comm_;
  mapped_array<std::uint32_t> ready_;     // [operation_slots], written by the streams
  mapped_array<std::uint32_t> released_;  // [operation_slots], written by the thread
  cuda_stream copies_;                    // the thread's staging copies
  // The thread's counting kernels, on a stream of their own: the next piece's copy need not wait
  // behind a count (each count is launched after its put's last piece is synchronised).
  cuda_stream counts_;

  // Shared with the program's thread, under mutex_.
  std::mutex mutex_;
  // Notified by the thread when a slot is freed and when every put sent is acknowledged.
  std::condition_variable progressed_;
  std::vector<bool> slot_busy_;
  std::deque<operation> submitted_;
  std::map<int, std::pair<char*, std::uint64_t>> windows_;  // this process's part, by handle
  std::uint32_t next_sequence_ = 1;
  std::uint64_t barriers_called_ = 0;
  std::uint64_t unsent_ = 0;  // puts and notifications submitted whose header has not gone out
  bool acknowledged_ = true;  // every put and notification sent is acknowledged

  // The thread's own.
  std::list<operation> queued_;  // submitted, their streams have not reached them
  // Puts being sent, and what must follow them out, in the order their streams reached them.
  std::deque<operation> outgoing_;
  std::list<operation> waiting_;  // flushes and barriers
  std::list<pending_send> sends_;
  std::vector<staging_buffer> outgoing_buffers_;
  std::vector<staging_buffer> incoming_buffers_;
  stream_message header_in_;
  MPI_Request header_request_ = MPI_REQUEST_NULL;
  std::vector<std::deque<incoming_message>> arrived_;  // per sending process
  std::vector<incoming_put> incoming_puts_;            // per sending process: its head put
  stream_put_ledger ledger_;
  stream_barrier_tally barriers_;
  // Per process: its closing has arrived (read by the program's thread for its report).
  std::unique_ptr<std::atomic<bool>[]> closed_;
  bool closing_sent_ = false;

  std::atomic<bool> close_requested_{false};
  std::atomic<bool> closed_all_{false};
  std::thread thread_;
};

}  // namespace dcuda::runtime
