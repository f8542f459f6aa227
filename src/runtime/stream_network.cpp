#include "runtime/stream_network.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "dcuda/detail/protocol/limits.h"
#include "runtime/diagnostics.h"
#include "runtime/driver_api.h"
#include "runtime/error.h"
#include "runtime/polling_thread.h"

namespace dcuda::runtime {
namespace {

// MPI tags on dcuda's duplicate communicator: headers, and the pieces of a put's payload, which
// follow its header in the order they were sent (MPI does not let messages of one sender and tag
// overtake each other).
constexpr int header_tag = 1;
constexpr int payload_tag = 2;

// The thread spins for this long after its last work (an answer often follows soon), then naps
// between polls so that an idle context does not keep a core busy.
constexpr auto spin_after_work = std::chrono::milliseconds(2);
constexpr auto idle_nap = std::chrono::microseconds(50);

const char* const thread_call = "the stream-ordered operations through the network";

// The ready words are written by the GPU (cuStreamWriteValue32, after the stream's earlier work
// and its writes); what the thread does next reads memory as of that write.
std::uint32_t load_acquire(std::uint32_t* word) {
  return std::atomic_ref<std::uint32_t>(*word).load(std::memory_order_acquire);
}

// DCUDA_DEBUG=TRACE: each step the thread takes for an operation, so that a stream that never
// goes on shows how far its operation got (started, sent, received, counted, released). The text
// is built only at that level.
template <typename Describe>
void trace_step(Describe&& describe) {
  if (log_enabled(log_level::trace)) trace("stream network: " + describe());
}

bool test(MPI_Request& request, MPI_Status* status = MPI_STATUS_IGNORE) {
  if (request == MPI_REQUEST_NULL) return true;
  int done = 0;
  DCUDA_MPI_CHECK(MPI_Test(&request, &done, status));
  return done != 0;
}

}  // namespace

stream_network::stream_network(const process_paths& paths, const bootstrap::rank_layout& ranks,
                               int device, std::size_t chunk_bytes, double wait_timeout_s,
                               bool flush_remote_writes, stream_wait_watch& watch,
                               counter_function counter_of, count_function count)
    : paths_(paths),
      ranks_(ranks),
      device_(device),
      chunk_bytes_(chunk_bytes),
      wait_timeout_s_(wait_timeout_s),
      flush_remote_writes_(flush_remote_writes),
      watch_(watch),
      counter_of_(std::move(counter_of)),
      count_(std::move(count)),
      comm_(paths.world),
      ready_(operation_slots),
      released_(operation_slots),
      slot_busy_(operation_slots, false),
      arrived_(static_cast<std::size_t>(paths.process_count())),
      incoming_puts_(static_cast<std::size_t>(paths.process_count())),
      ledger_(paths.process_count()),
      barriers_(paths.process_count(), paths.process_index),
      closed_(
          std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(paths.process_count()))) {
  int level = MPI_THREAD_SINGLE;
  DCUDA_MPI_CHECK(MPI_Query_thread(&level));
  if (level < MPI_THREAD_MULTIPLE) {
    throw error(DCUDA_ERROR_MPI,
                "dcuda_host_win_create: some processes are reached through the network, where a "
                "thread of each process carries the stream-ordered operations beside the "
                "program's own MPI calls: that needs MPI_THREAD_MULTIPLE, and MPI was initialised "
                "with less (let dcuda initialise MPI, or call MPI_Init_thread with "
                "MPI_THREAD_MULTIPLE)");
  }
  // Allocated now: cudaHostAlloc may block while a persistent kernel fills the GPU
  // (runtime/pinned_pool.h), and cudaFreeHost synchronises the device.
  for (int i = 0; i < staging_buffers; ++i) {
    outgoing_buffers_.push_back({mapped_array<char>(chunk_bytes_), MPI_REQUEST_NULL, false});
    incoming_buffers_.push_back({mapped_array<char>(chunk_bytes_), MPI_REQUEST_NULL, false});
  }
  DCUDA_MPI_CHECK(MPI_Irecv(&header_in_, sizeof header_in_, MPI_BYTE, MPI_ANY_SOURCE, header_tag,
                            comm_.get(), &header_request_));
  thread_ = std::thread([this] { serve(); });
}

stream_network::~stream_network() {
  close_requested_.store(true);
  const auto asked = std::chrono::steady_clock::now();
  while (!closed_all_.load()) {
    std::this_thread::sleep_for(idle_nap);
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - asked;
    if (wait_timeout_s_ > 0 && waited.count() > wait_timeout_s_) {
      std::ostringstream text;
      text << "dcuda_host_finish: waited " << waited.count()
           << " s (DCUDA_WAIT_TIMEOUT) for the stream-ordered operations through the network to "
              "end; processes that have not ended theirs:";
      bool named = false;
      for (int p = 0; p < paths_.process_count(); ++p) {
        if (p != paths_.process_index && !closed_[static_cast<std::size_t>(p)].load()) {
          text << ' ' << p;
          named = true;
        }
      }
      if (!named) text << " none (this process's sends are still under way)";
      report_and_exit("dcuda_host_finish", DCUDA_ERROR_TIMEOUT, text.str());
    }
  }
  thread_.join();
  if (header_request_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&header_request_);
    MPI_Wait(&header_request_, MPI_STATUS_IGNORE);
  }
}

void stream_network::expose_window(int handle, char* base, std::uint64_t size) {
  const std::lock_guard<std::mutex> guard(mutex_);
  windows_[handle] = {base, size};
}

void stream_network::forget_window(int handle) {
  const std::lock_guard<std::mutex> guard(mutex_);
  windows_.erase(handle);
}

void stream_network::submit(operation op, cudaStream_t stream, bool stream_waits) {
  std::uint32_t* ready = ready_.device() + op.slot;
  const std::uint32_t* released = released_.device() + op.slot;
  const std::uint32_t sequence = op.sequence;
  {
    const std::lock_guard<std::mutex> guard(mutex_);
    if (op.kind == operation_kind::put || op.kind == operation_kind::notify) ++unsent_;
    submitted_.push_back(std::move(op));
  }
  write_on_stream(stream, ready, sequence);
  if (stream_waits) wait_on_stream_until_reached(stream, released, sequence, flush_remote_writes_);
}

stream_network::operation stream_network::begin(const char* call, operation_kind kind,
                                                cudaStream_t stream) {
  operation fresh;
  fresh.kind = kind;
  DCUDA_CUDA_CHECK(cudaStreamGetId(stream, &fresh.stream_id));
  std::unique_lock<std::mutex> lock(mutex_);
  if (next_sequence_ == 0) next_sequence_ = 1;  // 0 is every word's value before its first use
  const std::uint32_t sequence = next_sequence_;
  const std::uint32_t slot = sequence % operation_slots;
  const auto free = [&] { return !slot_busy_[slot]; };
  if (wait_timeout_s_ > 0) {
    if (!progressed_.wait_for(lock, std::chrono::duration<double>(wait_timeout_s_), free)) {
      throw error(DCUDA_ERROR_TIMEOUT,
                  std::string(call) + ": " + std::to_string(operation_slots) +
                      " stream-ordered operations through the network are queued, and the oldest "
                      "has not been reached by its stream for " +
                      std::to_string(wait_timeout_s_) + " s (DCUDA_WAIT_TIMEOUT)");
    }
  } else {
    progressed_.wait(lock, free);
  }
  slot_busy_[slot] = true;
  ++next_sequence_;
  fresh.sequence = sequence;
  fresh.slot = slot;
  return fresh;
}

void stream_network::put(const char* call, int rank, int process, int handle, std::uint64_t offset,
                         std::uint64_t size, const void* source, int tag, cudaStream_t stream) {
  if (size == 0 && tag < 0) return;  // nothing to carry
  operation op = begin(call, size > 0 ? operation_kind::put : operation_kind::notify, stream);
  op.process = process;
  op.header.kind =
      static_cast<std::uint32_t>(size > 0 ? stream_message_kind::put : stream_message_kind::notify);
  op.header.rank = rank;
  op.header.window = handle;
  op.header.tag = tag;
  op.header.offset = offset;
  op.header.size = size;
  op.source = static_cast<const char*>(source);
  // A put holds its stream until its payload has been read; a notification does not.
  submit(std::move(op), stream, size > 0);
}

void stream_network::flush(const char* call, cudaStream_t stream) {
  operation op = begin(call, operation_kind::flush, stream);
  const std::uint32_t* released = released_.device() + op.slot;
  const std::uint32_t sequence = op.sequence;
  watch_.begin_wait(stream,
                    {call,
                     "the acknowledgements of the puts this process sent through the "
                     "network before it",
                     "a target process has not applied them to its window", sequence, released});
  submit(std::move(op), stream, true);
  watch_.finish_wait(stream);
}

void stream_network::barrier(const char* call, cudaStream_t stream) {
  operation op = begin(call, operation_kind::barrier, stream);
  {
    const std::lock_guard<std::mutex> guard(mutex_);
    op.barrier_number = ++barriers_called_;
  }
  const std::uint32_t* released = released_.device() + op.slot;
  const std::uint32_t sequence = op.sequence;
  watch_.begin_wait(stream, {call,
                             "every process at barrier " + std::to_string(op.barrier_number) +
                                 " (counted by this process's network thread)",
                             "some process has not queued this barrier, or its stream has not "
                             "reached it",
                             sequence, released});
  submit(std::move(op), stream, true);
  watch_.finish_wait(stream);
}

void stream_network::wait_until_acknowledged(const char* call) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto done = [&] { return unsent_ == 0 && acknowledged_; };
  if (wait_timeout_s_ <= 0) {
    progressed_.wait(lock, done);
    return;
  }
  if (!progressed_.wait_for(lock, std::chrono::duration<double>(wait_timeout_s_), done)) {
    throw error(DCUDA_ERROR_TIMEOUT,
                std::string(call) +
                    ": the puts this process sent through the network have not all been "
                    "acknowledged by their targets after " +
                    std::to_string(wait_timeout_s_) + " s (DCUDA_WAIT_TIMEOUT)");
  }
}

// The network thread.

void stream_network::serve() {
  try {
    DCUDA_CUDA_CHECK(cudaSetDevice(device_));
    auto last_work = std::chrono::steady_clock::now();
    while (!closed_all_.load()) {
      if (poll()) {
        last_work = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - last_work > spin_after_work) {
        std::this_thread::sleep_for(idle_nap);
      } else {
        cpu_relax();
      }
    }
  } catch (const std::exception& failure) {
    report_and_exit(thread_call, failure);
  }
}

bool stream_network::poll() {
  bool worked = take_ready();
  worked |= send_outgoing();
  worked |= receive_headers();
  worked |= apply_incoming();
  worked |= finish_waits();
  worked |= complete_sends();
  worked |= close_when_asked();
  return worked;
}

bool stream_network::take_ready() {
  {
    const std::lock_guard<std::mutex> guard(mutex_);
    while (!submitted_.empty()) {
      queued_.push_back(std::move(submitted_.front()));
      submitted_.pop_front();
    }
  }
  // In sequence order; a stream's operation that is not ready keeps its later ones back (their
  // ready words may already be written when this thread looks, if the earlier one does not hold
  // its stream), so that each stream's own order is kept.
  std::set<unsigned long long> held_back;
  bool worked = false;
  for (auto it = queued_.begin(); it != queued_.end();) {
    if (held_back.count(it->stream_id) != 0 ||
        load_acquire(ready_.host() + it->slot) != it->sequence) {
      held_back.insert(it->stream_id);
      ++it;
      continue;
    }
    start(std::move(*it));
    it = queued_.erase(it);
    worked = true;
  }
  return worked;
}

const char* stream_network::kind_name(operation_kind kind) {
  switch (kind) {
    case operation_kind::put:
      return "put";
    case operation_kind::notify:
      return "notify";
    case operation_kind::flush:
      return "flush";
    case operation_kind::barrier:
      return "barrier";
  }
  return "operation";
}

void stream_network::start(operation op) {
  trace_step([&] {
    return "operation " + std::to_string(op.sequence) + " (" + kind_name(op.kind) +
           ") started: its stream reached it";
  });
  switch (op.kind) {
    case operation_kind::put:
      outgoing_.push_back(std::move(op));
      return;
    case operation_kind::notify:
      // Behind the puts to the same process that started before it: a header goes out only
      // once the puts ahead of it in outgoing_ have sent theirs.
      if (std::none_of(outgoing_.begin(), outgoing_.end(),
                       [&](const operation& put) { return put.process == op.process; })) {
        send_acknowledged(op);
        release(op);
      } else {
        outgoing_.push_back(std::move(op));
      }
      return;
    case operation_kind::flush:
    case operation_kind::barrier:
      // Behind whatever has not gone out yet (a notification of the same stream may wait in
      // outgoing_ behind another stream's put): a flush then covers it, and a barrier's arrival
      // follows it to every process.
      if (outgoing_.empty()) {
        start_wait(std::move(op));
      } else {
        outgoing_.push_back(std::move(op));
      }
      return;
  }
}

void stream_network::start_wait(operation op) {
  if (op.kind == operation_kind::flush) {
    op.needed = ledger_.sent_so_far();
  } else {
    stream_message arrival;
    arrival.kind = static_cast<std::uint32_t>(stream_message_kind::barrier_arrival);
    arrival.sequence = op.barrier_number;
    for (int p = 0; p < paths_.process_count(); ++p) {
      if (p != paths_.process_index) send_header(p, arrival);
    }
  }
  waiting_.push_back(std::move(op));
}

bool stream_network::send_outgoing() {
  bool worked = false;
  while (!outgoing_.empty()) {
    operation& op = outgoing_.front();
    if (op.kind == operation_kind::flush || op.kind == operation_kind::barrier) {
      start_wait(std::move(op));
      outgoing_.pop_front();
      worked = true;
      continue;
    }
    if (op.kind == operation_kind::notify) {
      send_acknowledged(op);
      release(op);
      outgoing_.pop_front();
      worked = true;
      continue;
    }
    if (!op.header_sent) {
      send_acknowledged(op);
      op.header_sent = true;
    }
    while (op.staged < op.header.size) {
      const int index = take_buffer(outgoing_buffers_, true);
      if (index < 0) return worked;
      staging_buffer& buffer = outgoing_buffers_[static_cast<std::size_t>(index)];
      const std::uint64_t piece = std::min<std::uint64_t>(chunk_bytes_, op.header.size - op.staged);
      // From whatever memory the source is in (this GPU's, pinned or pageable host memory).
      DCUDA_CUDA_CHECK(cudaMemcpyAsync(buffer.bytes.host(), op.source + op.staged, piece,
                                       cudaMemcpyDefault, copies_.get()));
      DCUDA_CUDA_CHECK(cudaStreamSynchronize(copies_.get()));
      DCUDA_MPI_CHECK(MPI_Isend(buffer.bytes.host(), static_cast<int>(piece), MPI_BYTE, op.process,
                                payload_tag, comm_.get(), &buffer.request));
      op.staged += piece;
      worked = true;
    }
    release(op);  // the payload is read: the stream may go on and change the source
    outgoing_.pop_front();
    worked = true;
  }
  return worked;
}

bool stream_network::receive_headers() {
  bool worked = false;
  MPI_Status status;
  while (test(header_request_, &status)) {
    worked = true;
    const int sender = status.MPI_SOURCE;
    int bytes = 0;
    DCUDA_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &bytes));
    const stream_message header = header_in_;
    DCUDA_MPI_CHECK(MPI_Irecv(&header_in_, sizeof header_in_, MPI_BYTE, MPI_ANY_SOURCE, header_tag,
                              comm_.get(), &header_request_));
    if (bytes != static_cast<int>(sizeof header)) {
      throw error(DCUDA_ERROR_PEER, "a stream-ordered message of " + std::to_string(bytes) +
                                        " bytes from process " + std::to_string(sender) +
                                        " is not one dcuda sends (headers have " +
                                        std::to_string(sizeof header) + ")");
    }
    incoming_message message{header, nullptr};
    {
      const std::lock_guard<std::mutex> guard(mutex_);
      stream_message_context context;
      context.sender = sender;
      context.rank_start = ranks_.rank_start(paths_.process_index);
      context.rank_count = ranks_.ranks_of(paths_.process_index);
      context.tag_count = protocol::tag_count;
      context.window_size = [&](int handle) -> std::optional<std::uint64_t> {
        const auto found = windows_.find(handle);
        if (found == windows_.end()) return std::nullopt;
        return found->second.second;
      };
      context.unacknowledged_puts = ledger_.unacknowledged(sender);
      context.barriers_met = barriers_.met();
      if (std::optional<std::string> wrong = check_stream_message(header, context)) {
        throw error(DCUDA_ERROR_PEER, *wrong);
      }
      if (header.kind == static_cast<std::uint32_t>(stream_message_kind::put)) {
        message.destination = windows_.at(header.window).first + header.offset;
      }
    }
    trace_step([&] {
      return "received from process " + std::to_string(sender) + ": " + stream_message_text(header);
    });
    // An acknowledgement needs no order with the sender's other messages.
    if (header.kind == static_cast<std::uint32_t>(stream_message_kind::acknowledgement)) {
      ledger_.acknowledged(sender);
      if (ledger_.all_acknowledged()) {
        const std::lock_guard<std::mutex> guard(mutex_);
        acknowledged_ = true;
        progressed_.notify_all();
      }
      continue;
    }
    arrived_[static_cast<std::size_t>(sender)].push_back(message);
  }
  return worked;
}

bool stream_network::apply_incoming() {
  bool worked = false;
  for (int sender = 0; sender < paths_.process_count(); ++sender) {
    std::deque<incoming_message>& arrived = arrived_[static_cast<std::size_t>(sender)];
    incoming_put& put = incoming_puts_[static_cast<std::size_t>(sender)];
    while (!arrived.empty()) {
      const incoming_message& message = arrived.front();
      const stream_message& header = message.header;
      const auto kind = static_cast<stream_message_kind>(header.kind);
      if (kind == stream_message_kind::put) {
        bool waiting = false;
        while (put.received < header.size) {
          if (put.buffer < 0) {
            const int index = take_buffer(incoming_buffers_, false);
            if (index < 0) {
              waiting = true;
              break;
            }
            put.buffer = index;
            put.piece = std::min<std::uint64_t>(chunk_bytes_, header.size - put.received);
            DCUDA_MPI_CHECK(
                MPI_Irecv(incoming_buffers_[static_cast<std::size_t>(index)].bytes.host(),
                          static_cast<int>(put.piece), MPI_BYTE, sender, payload_tag, comm_.get(),
                          &incoming_buffers_[static_cast<std::size_t>(index)].request));
          }
          staging_buffer& buffer = incoming_buffers_[static_cast<std::size_t>(put.buffer)];
          MPI_Status status;
          if (!test(buffer.request, &status)) {
            waiting = true;
            break;
          }
          int bytes = 0;
          DCUDA_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &bytes));
          if (static_cast<std::uint64_t>(bytes) != put.piece) {
            throw error(DCUDA_ERROR_PEER,
                        "a stream-ordered put from process " + std::to_string(sender) +
                            " is not one dcuda sends: a piece of " + std::to_string(bytes) +
                            " bytes where " + std::to_string(put.piece) + " were due");
          }
          DCUDA_CUDA_CHECK(cudaMemcpyAsync(message.destination + put.received, buffer.bytes.host(),
                                           put.piece, cudaMemcpyHostToDevice, copies_.get()));
          DCUDA_CUDA_CHECK(cudaStreamSynchronize(copies_.get()));
          put.received += put.piece;
          buffer.in_use = false;
          put.buffer = -1;
          worked = true;
        }
        if (waiting) break;
        put = incoming_put{};
      }
      if (kind == stream_message_kind::put || kind == stream_message_kind::notify) {
        // A put's bytes are in the window (each piece synchronised above): count, then
        // acknowledge. A notification's tag was checked to be one.
        if (header.tag >= 0) count_(counter_of_(header.rank, header.tag), counts_.get());
        trace_step([&] {
          return "applied from process " + std::to_string(sender) + ": " +
                 stream_message_text(header) + (header.tag >= 0 ? "; its count is queued" : "");
        });
        stream_message acknowledgement;
        acknowledgement.kind = static_cast<std::uint32_t>(stream_message_kind::acknowledgement);
        send_header(sender, acknowledgement);
      } else if (kind == stream_message_kind::barrier_arrival) {
        if (!barriers_.arrive(sender, header.sequence)) {
          throw error(DCUDA_ERROR_PEER, "a stream-ordered barrier arrival from process " +
                                            std::to_string(sender) +
                                            " is not one dcuda sends: it arrived at barrier " +
                                            std::to_string(header.sequence) + " twice");
        }
      } else if (kind == stream_message_kind::closing) {
        closed_[static_cast<std::size_t>(sender)].store(true);
      }
      arrived.pop_front();
      worked = true;
    }
  }
  return worked;
}

bool stream_network::finish_waits() {
  bool worked = false;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const bool done = it->kind == operation_kind::flush
                          ? ledger_.covers(it->needed)
                          : barriers_.take_complete(it->barrier_number);
    if (!done) {
      ++it;
      continue;
    }
    release(*it);
    it = waiting_.erase(it);
    worked = true;
  }
  return worked;
}

bool stream_network::complete_sends() {
  bool worked = false;
  for (auto it = sends_.begin(); it != sends_.end();) {
    if (!test(it->request)) {
      ++it;
      continue;
    }
    it = sends_.erase(it);
    worked = true;
  }
  return worked;
}

bool stream_network::close_when_asked() {
  if (!close_requested_.load()) return false;
  // The GPU's work is done (the caller synchronised it), so every operation was submitted and
  // its stream reached it; what remains is the network's.
  bool idle;
  {
    const std::lock_guard<std::mutex> guard(mutex_);
    idle = submitted_.empty();
  }
  idle = idle && queued_.empty() && outgoing_.empty() && waiting_.empty();
  if (!idle) return false;
  if (!closing_sent_) {
    stream_message closing;
    closing.kind = static_cast<std::uint32_t>(stream_message_kind::closing);
    for (int p = 0; p < paths_.process_count(); ++p) {
      if (p != paths_.process_index) send_header(p, closing);
    }
    closing_sent_ = true;
    return true;
  }
  for (int p = 0; p < paths_.process_count(); ++p) {
    if (p != paths_.process_index && !closed_[static_cast<std::size_t>(p)].load()) return false;
  }
  for (staging_buffer& buffer : outgoing_buffers_) {
    if (buffer.in_use && !test(buffer.request)) return false;
    buffer.in_use = false;
  }
  if (!sends_.empty()) return false;
  closed_all_.store(true);
  return true;
}

void stream_network::release(const operation& op) {
  trace_step(
      [&] { return "operation " + std::to_string(op.sequence) + " released: its stream goes on"; });
  // The stream that waits for the word runs on once it sees it: what this thread did for the
  // operation (read the source, counted the acknowledgements) is done before.
  std::atomic_ref<std::uint32_t>(released_.host()[op.slot])
      .store(op.sequence, std::memory_order_release);
  const std::lock_guard<std::mutex> guard(mutex_);
  slot_busy_[op.slot] = false;
  progressed_.notify_all();
}

void stream_network::send_acknowledged(const operation& op) {
  send_header(op.process, op.header);
  ledger_.sent(op.process);
  const std::lock_guard<std::mutex> guard(mutex_);
  --unsent_;
  acknowledged_ = false;
}

void stream_network::send_header(int process, const stream_message& header) {
  trace_step([&] {
    return "sending to process " + std::to_string(process) + ": " + stream_message_text(header);
  });
  pending_send& send = sends_.emplace_back();
  send.header = header;
  DCUDA_MPI_CHECK(MPI_Isend(&send.header, sizeof send.header, MPI_BYTE, process, header_tag,
                            comm_.get(), &send.request));
}

int stream_network::take_buffer(std::vector<staging_buffer>& buffers, bool outgoing) {
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    staging_buffer& buffer = buffers[i];
    if (buffer.in_use && outgoing && test(buffer.request)) buffer.in_use = false;
    if (buffer.in_use) continue;
    buffer.in_use = true;
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace dcuda::runtime
