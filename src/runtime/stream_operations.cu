#include "runtime/stream_operations.h"

#include <mpi.h>

#include <algorithm>
#include <optional>
#include <string>

#include "bootstrap/mpi_session.h"
#include "dcuda/detail/device/memory_order.cuh"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/notification_counters.h"
#include "runtime/driver_api.h"
#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

constexpr std::uint32_t tags = protocol::tag_count;
constexpr unsigned put_threads = 512;

// Every kernel here is launched by launch_on_stream, which lets it start before the kernel ahead
// of it on the stream has ended (programmatic dependent launch, sm_90): each first waits for the
// work queued before it to complete, as stream order would have done (a put's copy: its bytes are
// in the target GPU's memory; a kernel's writes), and only then lets the stream's next kernel
// start its blocks. Between two puts of a stream this hides the second's launch behind the first's
// copy. The release fence, before the count, also orders whatever this GPU wrote before the
// kernel (a kernel of the same stream); a stream that waits for the count then runs after it, and
// its work reads memory as of the count.
__global__ void count_notification(std::uint32_t* counter) {
  device::wait_for_prerequisite_grids();
  device::allow_dependent_launch();
  device::fence_release_sys();
  device::red_relaxed_sys_increment_u32(counter);
}

// 16-byte words each thread loads before it stores them. The compiler may not move a load above
// an earlier store (the two may alias), so a plain loop has one load in flight per thread: too
// few for the memory's latency (a copy within an H200 reached 0.7 of the copy engines).
constexpr int words_in_flight = 4;

// Copies `size` bytes with every thread of the grid: 16 bytes per load and store where source
// and destination have the same alignment to 16 bytes (the bytes before the first aligned word
// and after the last one a byte per thread), a byte per thread otherwise.
__device__ void copy_with_grid(char* destination, const char* source, std::uint64_t size) {
  const std::uint64_t thread = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t threads = gridDim.x * static_cast<std::uint64_t>(blockDim.x);
  const auto to = reinterpret_cast<std::uintptr_t>(destination);
  const auto from = reinterpret_cast<std::uintptr_t>(source);
  std::uint64_t head = size;  // bytes copied one at a time from the start
  std::uint64_t words = 0;    // then 16-byte words
  if ((to - from) % sizeof(uint4) == 0) {
    head = (sizeof(uint4) - to % sizeof(uint4)) % sizeof(uint4);
    if (head > size) head = size;
    words = (size - head) / sizeof(uint4);
  }
  auto* wide_destination = reinterpret_cast<uint4*>(destination + head);
  const auto* wide_source = reinterpret_cast<const uint4*>(source + head);
  std::uint64_t word = thread;
  for (; word + (words_in_flight - 1) * threads < words; word += words_in_flight * threads) {
    uint4 loaded[words_in_flight];
#pragma unroll
    for (int k = 0; k < words_in_flight; ++k) loaded[k] = wide_source[word + k * threads];
#pragma unroll
    for (int k = 0; k < words_in_flight; ++k) wide_destination[word + k * threads] = loaded[k];
  }
  for (; word < words; word += threads) wide_destination[word] = wide_source[word];
  for (std::uint64_t i = thread; i < head; i += threads) destination[i] = source[i];
  for (std::uint64_t i = head + words * sizeof(uint4) + thread; i < size; i += threads) {
    destination[i] = source[i];
  }
}

// A put_notify in one kernel: the grid copies the payload with stores (over NVLink for a peer),
// then counts once. One launch instead of a copy by the copy engines followed by the counting
// kernel. In each block the barrier orders every thread's stores before thread 0's release fence,
// which is cumulative. With one block that thread counts. With several, each block's thread 0
// adds its arrival to the stream's arrival word; the last to arrive acquires (so the other blocks'
// released stores are ordered before what it does next), releases again and counts: a waiter that
// sees the count sees every block's bytes. It also resets the word, which the stream's next
// kernel reads only after this one has ended.
__global__ void __launch_bounds__(put_threads)
    put_and_count(char* destination, const char* source, std::uint64_t size, std::uint32_t* counter,
                  std::uint32_t* arrivals) {
  device::wait_for_prerequisite_grids();
  device::allow_dependent_launch();
  copy_with_grid(destination, source, size);
  __syncthreads();
  if (threadIdx.x != 0) return;
  device::fence_release_sys();
  if (gridDim.x > 1) {
    if (device::atomic_add_relaxed_gpu_u32(arrivals, 1) != gridDim.x - 1) return;
    device::fence_acquire_sys();
    *arrivals = 0;
    device::fence_release_sys();
  }
  device::red_relaxed_sys_increment_u32(counter);
}

// One thread per process: the arrival of this process at a barrier, counted at every process.
__global__ void count_barrier_arrival(std::uint32_t* const* words) {
  device::wait_for_prerequisite_grids();
  device::allow_dependent_launch();
  device::fence_release_sys();
  device::red_relaxed_sys_increment_u32(words[threadIdx.x]);
}

// Launches `kernel`, one of the kernels above, on `stream`. `early`: with programmatic stream
// serialization, so that its blocks may start while the stream's kernel ahead of it still runs
// (the kernel's first wait keeps the order). Only for GPUs that have it (sm_90 and newer).
template <typename... Params, typename... Args>
void launch_on_stream(void (*kernel)(Params...), unsigned blocks, unsigned threads,
                      cudaStream_t stream, bool early, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = early ? 1 : 0;
  DCUDA_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

[[noreturn]] void refuse(dcuda_error_code code, const char* call, const std::string& text) {
  throw error(code, std::string(call) + ": " + text);
}

// Which collective call a process makes, so that a mismatch is named instead of mixed up.
enum collective_call : int { create_call = 1, free_call = 2 };

const char* collective_name(int call_id) {
  return call_id == create_call ? "dcuda_host_win_create"
         : call_id == free_call ? "dcuda_host_win_free"
                                : "another call";
}

}  // namespace

wait_thresholds::wait_thresholds(int ranks)
    : consumed_(static_cast<std::size_t>(ranks) * tags, 0u) {}

std::uint32_t wait_thresholds::consume(int local_rank, int tag, int count) {
  std::uint32_t& consumed = consumed_[protocol::counter_index(
      static_cast<std::uint32_t>(local_rank), static_cast<std::uint32_t>(tag))];
  consumed += static_cast<std::uint32_t>(count);  // wraps as the counter does
  return consumed;
}

stream_operations::stream_operations(const process_paths& paths,
                                     const bootstrap::rank_layout& ranks, int device,
                                     double wait_timeout_s, std::size_t copy_engine_from,
                                     std::size_t network_chunk)
    : paths_(paths),
      ranks_(ranks),
      device_(device),
      copy_engine_from_(copy_engine_from),
      max_put_blocks_(1),
      flush_remote_writes_(false),
      early_launch_(false),
      counters_(static_cast<std::size_t>(ranks.ranks_of(paths.process_index)) * tags + 1),
      taken_by_ranks_(static_cast<std::size_t>(ranks.ranks_of(paths.process_index)) * tags),
      process_counters_(static_cast<std::size_t>(paths.process_count()), nullptr),
      window_view_(static_cast<std::size_t>(protocol::host_window_slots) *
                   static_cast<std::size_t>(paths.process_count())),
      target_view_(static_cast<std::size_t>(ranks.world_size())),
      own_view_(static_cast<std::size_t>(protocol::host_window_slots)),
      thresholds_(ranks.ranks_of(paths.process_index)),
      watch_(wait_timeout_s, device) {
  int flush = 0;
  DCUDA_CUDA_CHECK(cudaDeviceGetAttribute(&flush, cudaDevAttrCanFlushRemoteWrites, device));
  flush_remote_writes_ = flush != 0;
  int multiprocessors = 1;
  DCUDA_CUDA_CHECK(
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  max_put_blocks_ = static_cast<unsigned>(std::max(multiprocessors, 1));
  int major = 0;
  DCUDA_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  early_launch_ = major >= 9;
  launch_each_kernel_once();
  // Zeroed before any process can count here: the exchange below is after it on every process,
  // and so is every stream's work here (cudaMemset may return before it is done, and other
  // streams are not ordered after it).
  DCUDA_CUDA_CHECK(cudaMemset(counters_.get(), 0, counters_.size() * sizeof(std::uint32_t)));
  DCUDA_CUDA_CHECK(
      cudaMemset(taken_by_ranks_.get(), 0, taken_by_ranks_.size() * sizeof(std::uint32_t)));
  DCUDA_CUDA_CHECK(
      cudaMemset(window_view_.get(), 0, window_view_.size() * sizeof(protocol::host_window_entry)));
  DCUDA_CUDA_CHECK(cudaDeviceSynchronize());
  process_counters_[static_cast<std::size_t>(paths.process_index)] = counters_.get();
  if (paths.process_count() > 1) {
    const std::vector<mapped_export> mapped = exchange_exports(paths, counters_.get(), mappings_);
    for (std::size_t p = 0; p < mapped.size(); ++p) {
      if (mapped[p].mapped_base == nullptr) continue;
      process_counters_[p] =
          reinterpret_cast<std::uint32_t*>(mapped[p].mapped_base + mapped[p].offset);
    }
  }
  std::vector<std::uint32_t*> words;
  for (int p = 0; p < paths.process_count(); ++p) {
    std::uint32_t* counters = process_counters_[static_cast<std::size_t>(p)];
    if (counters != nullptr) words.push_back(counters + ranks.ranks_of(p) * tags);
  }
  barrier_words_ = device_array<std::uint32_t*>(words.size());
  DCUDA_CUDA_CHECK(cudaMemcpy(barrier_words_.get(), words.data(),
                              words.size() * sizeof(std::uint32_t*), cudaMemcpyHostToDevice));
  std::vector<protocol::host_rank_target> targets(target_view_.size());
  for (int rank = 0; rank < ranks.world_size(); ++rank) {
    const int process = ranks.process_of(rank);
    const bool reached = process_counters_[static_cast<std::size_t>(process)] != nullptr;
    targets[static_cast<std::size_t>(rank)] = {reached ? counter_of(rank, 0) : nullptr, process, 0};
  }
  DCUDA_CUDA_CHECK(cudaMemcpy(target_view_.get(), targets.data(),
                              targets.size() * sizeof(protocol::host_rank_target),
                              cudaMemcpyHostToDevice));
  if (words.size() != static_cast<std::size_t>(paths.process_count())) {
    network_.emplace(
        paths, ranks, device, network_chunk, wait_timeout_s, flush_remote_writes_, watch_,
        [this](int rank, int tag) { return counter_of(rank, tag); },
        [early = early_launch_](std::uint32_t* counter, cudaStream_t stream) {
          launch_on_stream(count_notification, 1, 1, stream, early, counter);
        });
  }
}

// Under CUDA's lazy loading (the default) a kernel is loaded at its first launch, and a load waits
// for the GPU's running work, which may be a stream held by a wait for this very kernel's count:
// the launch, and the process, would hang. Under compute-sanitizer a first launch waits so even
// for a loaded kernel. So each is launched once now, before any stream waits, on words of its own.
void stream_operations::launch_each_kernel_once() const {
  const cudaStream_t stream = view_stream_.get();
  const device_array<std::uint32_t> words(2);
  const device_array<std::uint32_t*> arrival_words(1);
  std::uint32_t* const first = words.get();
  DCUDA_CUDA_CHECK(
      cudaMemcpyAsync(arrival_words.get(), &first, sizeof first, cudaMemcpyHostToDevice, stream));
  DCUDA_CUDA_CHECK(cudaMemsetAsync(words.get(), 0, words.size() * sizeof(std::uint32_t), stream));
  launch_on_stream(count_notification, 1, 1, stream, early_launch_, words.get());
  launch_on_stream(put_and_count, 1, put_threads, stream, early_launch_,
                   reinterpret_cast<char*>(words.get() + 1), static_cast<const char*>(nullptr),
                   std::uint64_t{0}, words.get(), static_cast<std::uint32_t*>(nullptr));
  launch_on_stream(count_barrier_arrival, 1, 1, stream, early_launch_,
                   static_cast<std::uint32_t* const*>(arrival_words.get()));
  DCUDA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

stream_operations::~stream_operations() {
  // The peers may still count here and this GPU's streams may still wait: the counters stay until
  // the work queued on the GPU is done; the watchdog names a wait that never ends meanwhile.
  cudaDeviceSynchronize();
}

std::vector<std::int64_t> stream_operations::agree(const char* call, int call_id,
                                                   std::int64_t value, bool same) const {
  struct card {
    std::int64_t call_id;
    std::int64_t value;
  };
  const card mine{call_id, value};
  std::vector<card> cards(static_cast<std::size_t>(paths_.process_count()), mine);
  if (paths_.process_count() > 1) {
    DCUDA_MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE,
                                  paths_.world));
  }
  std::vector<std::int64_t> values;
  for (std::size_t p = 0; p < cards.size(); ++p) {
    if (cards[p].call_id != call_id) {
      refuse(DCUDA_ERROR_PEER, call,
             "process " + std::to_string(p) + " called " +
                 collective_name(static_cast<int>(cards[p].call_id)) +
                 " at the same point: the processes' collective calls differ");
    }
    if (same && cards[p].value != value) {
      refuse(DCUDA_ERROR_PEER, call,
             "process " + std::to_string(p) + " passed window " + std::to_string(cards[p].value) +
                 ", this process window " + std::to_string(value));
    }
    values.push_back(cards[p].value);
  }
  return values;
}

int stream_operations::create_window(const char* call, void* base, std::size_t size) {
  if (size > 0) {
    if (base == nullptr) refuse(DCUDA_ERROR_INVALID_ARGUMENT, call, "base is NULL, size > 0");
    const std::optional<allocation_range> range = find_allocation(base);
    const auto* begin = static_cast<const char*>(base);
    const auto* allocation = static_cast<const char*>(range ? range->base : nullptr);
    if (!range || static_cast<std::size_t>(begin - allocation) > range->size ||
        size > range->size - static_cast<std::size_t>(begin - allocation)) {
      refuse(DCUDA_ERROR_INVALID_ARGUMENT, call,
             "[" + std::to_string(reinterpret_cast<std::uintptr_t>(base)) + ", + " +
                 std::to_string(size) +
                 ") is not inside one device allocation of this process (cudaMalloc)");
    }
    if (paths_.any_peer() && !made_by_cuda_malloc(base)) {
      refuse(DCUDA_ERROR_INVALID_ARGUMENT, call,
             "the memory at base is not from cudaMalloc: the processes of the node map host "
             "windows with CUDA IPC, which needs cudaMalloc memory");
    }
  }
  const std::vector<std::int64_t> sizes =
      agree(call, create_call, static_cast<std::int64_t>(size), false);
  host_window window;
  window.sizes.assign(sizes.begin(), sizes.end());
  window.bases.assign(sizes.size(), nullptr);
  window.bases[static_cast<std::size_t>(paths_.process_index)] =
      size > 0 ? static_cast<char*>(base) : nullptr;
  if (paths_.process_count() > 1) {
    const std::vector<mapped_export> mapped =
        exchange_exports(paths_, size > 0 ? base : nullptr, mappings_);
    for (std::size_t p = 0; p < mapped.size(); ++p) {
      if (mapped[p].mapped_base != nullptr) {
        window.bases[p] = mapped[p].mapped_base + mapped[p].offset;
      }
    }
  }
  const int handle = windows_.add(call, std::move(window));
  publish_to_ranks(handle, &windows_.find(call, handle));
  if (network_)
    network_->expose_window(handle, size > 0 ? static_cast<char*>(base) : nullptr, size);
  return handle;
}

void stream_operations::publish_to_ranks(int handle, const host_window* window) {
  const auto processes = static_cast<std::size_t>(paths_.process_count());
  std::vector<protocol::host_window_entry> entries(processes, protocol::host_window_entry{});
  if (window != nullptr) {
    for (std::size_t p = 0; p < processes; ++p) {
      entries[p] = {reinterpret_cast<std::uint64_t>(window->bases[p]), window->sizes[p],
                    protocol::window_generation(handle), 0};
    }
  }
  own_view_[static_cast<std::size_t>(protocol::window_slot(handle) -
                                     protocol::host_window_first_slot)] =
      entries[static_cast<std::size_t>(paths_.process_index)];
  // Ranks read the view only in runs, and window calls wait for a run in flight: no rank reads it
  // now. A stream of its own, so that the copy does not wait for the legacy stream's order.
  protocol::host_window_entry* row =
      window_view_.get() + protocol::host_window_index(handle, 0, paths_.process_count());
  DCUDA_CUDA_CHECK(cudaMemcpyAsync(row, entries.data(),
                                   processes * sizeof(protocol::host_window_entry),
                                   cudaMemcpyHostToDevice, view_stream_.get()));
  DCUDA_CUDA_CHECK(cudaStreamSynchronize(view_stream_.get()));
}

void stream_operations::free_window(const char* call, int handle) {
  windows_.find(call, handle);
  agree(call, free_call, handle, true);
  // Every put into the window queued on this GPU has landed (those through the network once their
  // targets acknowledge them), and after the barrier every other process's too: no copy of a
  // stream-ordered put can reach the memory after this returns.
  DCUDA_CUDA_CHECK(cudaDeviceSynchronize());
  if (network_) network_->wait_until_acknowledged(call);
  if (paths_.process_count() > 1) DCUDA_MPI_CHECK(MPI_Barrier(paths_.world));
  if (network_) network_->forget_window(handle);
  windows_.remove(call, handle);
  publish_to_ranks(handle, nullptr);
}

std::size_t stream_operations::kernel_readable_bytes(const void* source) const {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, source) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  if (attributes.type == cudaMemoryTypeDevice && attributes.device == device_) {
    return static_cast<std::size_t>(-1);
  }
  // Mapped pinned host memory: the kernel's loads cross PCIe, where the copy engines move large
  // payloads better; one block's worth still saves the second launch.
  if (attributes.type == cudaMemoryTypeHost && attributes.devicePointer == source) {
    return single_block_put_limit;
  }
  return 0;
}

int stream_operations::target_process(const char* call, int rank) const {
  check_target_rank(call, rank, ranks_.world_size());
  return ranks_.process_of(rank);
}

std::uint32_t* stream_operations::counter_of(int rank, int tag) const {
  const int process = ranks_.process_of(rank);
  const auto local = static_cast<std::uint32_t>(rank - ranks_.rank_start(process));
  return process_counters_[static_cast<std::size_t>(process)] +
         protocol::counter_index(local, static_cast<std::uint32_t>(tag));
}

std::uint32_t* stream_operations::arrival_word(cudaStream_t stream) {
  unsigned long long id = 0;
  DCUDA_CUDA_CHECK(cudaStreamGetId(stream, &id));
  const auto found = arrival_words_.find(id);
  if (found != arrival_words_.end()) return found->second;
  if (arrival_blocks_.empty() || arrival_words_used_ == arrival_block_words) {
    const device_scope on_this_gpu(device_);
    arrival_blocks_.emplace_back(arrival_block_words);
    arrival_words_used_ = 0;
  }
  std::uint32_t* word = arrival_blocks_.back().get() + arrival_words_used_++;
  // Zeroed on the stream itself, before its first multi-block put: a memset on any other stream
  // (the legacy one included) would not be ordered before that put, and a legacy-stream memset
  // would wait for the blocking streams' queued waits, which this put may be what satisfies.
  DCUDA_CUDA_CHECK(cudaMemsetAsync(word, 0, sizeof(std::uint32_t), stream));
  arrival_words_.emplace(id, word);
  return word;
}

void stream_operations::check_stream(const char* call, cudaStream_t stream) const {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  DCUDA_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    refuse(DCUDA_ERROR_INVALID_STATE, call,
           "the stream is being captured into a CUDA graph; stream-ordered operations count "
           "notifications when they are called, so a graph could not replay them");
  }
}

void stream_operations::put(const char* call, int handle, int rank, std::size_t offset,
                            std::size_t size, const void* source, std::optional<int> tag,
                            cudaStream_t stream) {
  const host_window& window = windows_.find(call, handle);
  const int process = target_process(call, rank);
  const bool by_network = process_counters_[static_cast<std::size_t>(process)] == nullptr;
  check_window_target(call, handle, window, rank, process, !by_network || network_.has_value(),
                      offset, size);
  if (tag) check_stream_tag(call, rank, *tag);
  if (size > 0 && source == nullptr) {
    refuse(DCUDA_ERROR_INVALID_ARGUMENT, call,
           "source is NULL for " + std::to_string(size) + " bytes to rank " + std::to_string(rank));
  }
  check_stream(call, stream);
  if (by_network) {
    network_->put(call, rank, process, handle, offset, size, source, tag.value_or(-1), stream);
    return;
  }
  char* destination = window.bases[static_cast<std::size_t>(process)] + offset;
  const bool aligned_alike =
      (reinterpret_cast<std::uintptr_t>(destination) - reinterpret_cast<std::uintptr_t>(source)) %
          16 ==
      0;
  if (tag && size > 0 && size < copy_engine_from_ &&
      (aligned_alike || size <= misaligned_kernel_put_limit) &&
      size <= kernel_readable_bytes(source)) {
    const auto blocks =
        size <= single_block_put_limit
            ? 1u
            : static_cast<unsigned>(std::min<std::size_t>(
                  (size + bytes_per_put_block - 1) / bytes_per_put_block, max_put_blocks_));
    std::uint32_t* arrivals = blocks > 1 ? arrival_word(stream) : nullptr;
    launch_on_stream(put_and_count, blocks, put_threads, stream, early_launch_, destination,
                     static_cast<const char*>(source), size, counter_of(rank, *tag), arrivals);
    return;
  }
  if (size > 0) {
    DCUDA_CUDA_CHECK(cudaMemcpyAsync(destination, source, size, cudaMemcpyDefault, stream));
  }
  if (tag) {
    launch_on_stream(count_notification, 1, 1, stream, early_launch_, counter_of(rank, *tag));
  }
}

void stream_operations::notify(const char* call, int handle, int rank, int tag,
                               cudaStream_t stream) {
  put(call, handle, rank, 0, 0, nullptr, tag, stream);
}

void stream_operations::get(const char* call, int handle, int rank, std::size_t offset,
                            std::size_t size, void* destination, cudaStream_t stream) {
  const host_window& window = windows_.find(call, handle);
  const int process = target_process(call, rank);
  check_get_source(call, rank, process,
                   process_counters_[static_cast<std::size_t>(process)] != nullptr);
  check_window_target(call, handle, window, rank, process, true, offset, size);
  if (size > 0 && destination == nullptr) {
    refuse(DCUDA_ERROR_INVALID_ARGUMENT, call,
           "destination is NULL for " + std::to_string(size) + " bytes from rank " +
               std::to_string(rank));
  }
  check_stream(call, stream);
  if (size == 0) return;
  const char* source = window.bases[static_cast<std::size_t>(process)] + offset;
  DCUDA_CUDA_CHECK(cudaMemcpyAsync(destination, source, size, cudaMemcpyDefault, stream));
}

void stream_operations::flush(const char* call, int handle, cudaStream_t stream) {
  windows_.find(call, handle);
  // A put is complete when its copy is, and the stream runs its later work after that: stream
  // order is the flush on the peer path. Through the network the targets acknowledge them.
  check_stream(call, stream);
  if (network_) network_->flush(call, stream);
}

void stream_operations::wait(const char* call, int rank, int tag, int count, cudaStream_t stream) {
  const int first = ranks_.rank_start(paths_.process_index);
  const int own = ranks_.ranks_of(paths_.process_index);
  if (rank < first || rank >= first + own) {
    refuse(DCUDA_ERROR_INVALID_ARGUMENT, call,
           "rank " + std::to_string(rank) + " is not one of this process's ranks (" +
               std::to_string(first) + ".." + std::to_string(first + own - 1) +
               "): a stream waits for notifications counted at its own process");
  }
  check_stream_tag(call, rank, tag);
  check_stream_count(call, rank, count);
  check_stream(call, stream);
  if (count == 0) return;
  const std::uint32_t needed = thresholds_.consume(rank - first, tag, count);
  const std::uint32_t* counter = counter_of(rank, tag);
  watch_.begin_wait(
      stream,
      {call,
       std::to_string(count) + " notification(s) of tag " + std::to_string(tag) + " at rank " +
           std::to_string(rank),
       "no put_notify or notify (stream-ordered, or a rank's into a host window) has counted the "
       "rest",
       needed, counter});
  wait_on_stream_until_reached(stream, counter, needed, flush_remote_writes_);
  watch_.finish_wait(stream);
}

void stream_operations::barrier(const char* call, cudaStream_t stream) {
  const auto processes = static_cast<std::uint32_t>(paths_.process_count());
  check_stream(call, stream);
  if (network_) {
    network_->barrier(call, stream);
    return;
  }
  ++barriers_;
  launch_on_stream(count_barrier_arrival, 1, processes, stream, early_launch_,
                   static_cast<std::uint32_t* const*>(barrier_words_.get()));
  const std::uint32_t needed = barriers_ * processes;
  const std::uint32_t* word = counters_.get() + (counters_.size() - 1);
  watch_.begin_wait(stream, {call,
                             "every process at barrier " + std::to_string(barriers_) +
                                 " (one count per process and barrier)",
                             "some process has not queued this barrier, or its stream has not "
                             "reached it",
                             needed, word});
  wait_on_stream_until_reached(stream, word, needed, flush_remote_writes_);
  watch_.finish_wait(stream);
}

}  // namespace dcuda::runtime
