// Host windows and the stream-ordered operations of dcuda/host_stream.h on one GPU: the bytes and
// counts that arrive, the bytes gets read, the order against kernels of the same stream, completion
// in the order the streams get there (not the order of the calls), and the errors, the watchdog's
// included.
#include <cuda_runtime.h>

#include <chrono>
#include <string>
#include <thread>

#include "dcuda/device.cuh"
#include "dcuda/host.h"
#include "dcuda/host_stream.h"
#include "gpu_harness.h"
#include "stream_gate.cuh"
#include "test_main.h"

namespace {

using namespace gpu_test;

__global__ void idle_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  dcuda_gpu_finish(gst);
}

void load_kernels();

dcuda_host_context_handle start_context(dcuda_rank_info& info) {
  load_kernels();
  return start_dcuda(idle_kernel, 64, {"--dcuda-ranks-per-device=4"}, std::nullopt, info);
}

__global__ void fill_kernel(unsigned char* bytes, int size, int seed) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += gridDim.x * blockDim.x) {
    bytes[i] = static_cast<unsigned char>(i * 7 + seed);
  }
}

// Counts the bytes of `bytes` that fill_kernel(seed) did not write.
__global__ void count_wrong_kernel(const unsigned char* bytes, int size, int seed, int* wrong) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += gridDim.x * blockDim.x) {
    if (bytes[i] != static_cast<unsigned char>(i * 7 + seed)) atomicAdd(wrong, 1);
  }
}

// Holds its stream until the host opens the gate.
__global__ void gate_kernel(const volatile int* gate) {
  wait_at_gate(gate);
}

// As a user's kernel that uses programmatic dependent launch may: lets the stream's next kernel
// start at once, then writes its bytes only once the host opens the gate. A kernel after it that
// reads the bytes without waiting for this one to complete reads them too early.
__global__ void early_trigger_fill_kernel(unsigned char* bytes, int size, int seed,
                                          const volatile int* gate) {
  cudaTriggerProgrammaticLaunchCompletion();
  if (!wait_at_gate(gate)) return;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += gridDim.x * blockDim.x) {
    bytes[i] = static_cast<unsigned char>(i * 7 + seed);
  }
}

// Loads the test's kernels before any stream waits: under CUDA's lazy loading a kernel's first
// launch waits for the GPU's running work (docs/api.md), which a held stream never finishes.
// A blocking stream (cudaStreamCreate): the legacy default stream and it wait for each other.
struct blocking_stream {
  cudaStream_t stream = nullptr;
  blocking_stream() { GPU_CHECK(cudaStreamCreate(&stream)); }
  ~blocking_stream() { cudaStreamDestroy(stream); }
  blocking_stream(const blocking_stream&) = delete;
  blocking_stream& operator=(const blocking_stream&) = delete;
};

void load_kernels() {
  cudaFuncAttributes attributes{};
  GPU_CHECK(cudaFuncGetAttributes(&attributes, fill_kernel));
  GPU_CHECK(cudaFuncGetAttributes(&attributes, count_wrong_kernel));
  GPU_CHECK(cudaFuncGetAttributes(&attributes, gate_kernel));
  GPU_CHECK(cudaFuncGetAttributes(&attributes, early_trigger_fill_kernel));
}

// A context, a host window of `bytes` over the whole of `window`, a source of as many bytes and
// a count of wrong bytes; the window freed and the context finished at the end.
struct window_job {
  dcuda_rank_info info{};
  dcuda_host_context_handle context = nullptr;
  device_buffer<unsigned char> window;
  device_buffer<unsigned char> source;
  device_buffer<int> wrong{1};
  dcuda_win win = DCUDA_WIN_NONE;

  explicit window_job(int bytes)
      : context(start_context(info)),
        window(static_cast<std::size_t>(bytes)),
        source(static_cast<std::size_t>(bytes)) {
    dcuda_host_win_create(context, window.data, bytes, &win);
  }
  ~window_job() {
    dcuda_host_win_free(context, win);
    dcuda_host_finish(context);
  }
  window_job(const window_job&) = delete;
  window_job& operator=(const window_job&) = delete;
};

int read_back(const int* value) {
  int host = 0;
  GPU_CHECK(cudaMemcpy(&host, value, sizeof host, cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace

DCUDA_TEST(stream_ordered_puts_land_between_the_kernels_of_their_stream) {
  require_gpu();
  constexpr int window_bytes = 1 << 20;
  const window_job job(window_bytes);
  stream_holder held;
  const int me = job.info.rank_start;
  // Sizes from one byte to the whole window, each at an offset of its own: written by a kernel of
  // the stream, put, waited for on the stream, checked by the next kernel of the stream.
  int round = 0;
  for (int size : {1, 8, 4096, 65536, window_bytes - 4096}) {
    const int offset = size == window_bytes - 4096 ? 4096 : 4096 - size % 4096;
    fill_kernel<<<64, 256, 0, held.stream>>>(job.source.data, size, round);
    dcuda_put_notify_on_stream(job.context, job.win, me + 1, offset, size, job.source.data, 5,
                               held.stream);
    dcuda_wait_notifications_on_stream(job.context, me + 1, 5, 1, held.stream);
    count_wrong_kernel<<<64, 256, 0, held.stream>>>(job.window.data + offset, size, round,
                                                    job.wrong.data);
    ++round;
  }
  // A plain put, ordered by the stream (and the flush) before the kernel after it.
  fill_kernel<<<64, 256, 0, held.stream>>>(job.source.data, 3000, 40);
  dcuda_put_on_stream(job.context, job.win, me, 100, 3000, job.source.data, held.stream);
  dcuda_win_flush_on_stream(job.context, job.win, held.stream);
  count_wrong_kernel<<<64, 256, 0, held.stream>>>(job.window.data + 100, 3000, 40, job.wrong.data);
  GPU_CHECK(cudaStreamSynchronize(held.stream));
  DCUDA_CHECK_EQ(read_back(job.wrong.data), 0);
}

// A get reads the window when its stream reaches it: after the kernel of the stream that wrote
// the bytes, and after a stream wait, the put whose notification the wait consumed; it writes
// its bytes and no byte beyond.
DCUDA_TEST(stream_ordered_gets_read_the_window_when_their_stream_reaches_them) {
  require_gpu();
  constexpr int window_bytes = 1 << 20;
  const window_job job(window_bytes);
  stream_holder reader;
  stream_holder writer;
  const int me = job.info.rank_start;
  device_buffer<unsigned char> copied(window_bytes);
  constexpr unsigned char untouched = 0xee;
  int round = 0;
  for (int size : {1, 8, 4096, 65536, window_bytes - 4096}) {
    const int offset = size == window_bytes - 4096 ? 4096 : 4096 - size % 4096;
    GPU_CHECK(cudaMemsetAsync(copied.data, untouched, window_bytes, reader.stream));
    fill_kernel<<<64, 256, 0, reader.stream>>>(job.window.data + offset, size, round);
    dcuda_get_on_stream(job.context, job.win, me + 2, offset, size, copied.data, reader.stream);
    count_wrong_kernel<<<64, 256, 0, reader.stream>>>(copied.data, size, round, job.wrong.data);
    GPU_CHECK(cudaStreamSynchronize(reader.stream));
    unsigned char after = 0;
    GPU_CHECK(cudaMemcpy(&after, copied.data + size, 1, cudaMemcpyDeviceToHost));
    DCUDA_CHECK_EQ(static_cast<int>(after), static_cast<int>(untouched));
    ++round;
  }
  DCUDA_CHECK_EQ(read_back(job.wrong.data), 0);
  // The get waits behind the stream's wait until another stream's put_notify has landed.
  constexpr int size = 65536;
  fill_kernel<<<64, 256, 0, reader.stream>>>(job.window.data, size, 70);  // what an early get sees
  GPU_CHECK(cudaStreamSynchronize(reader.stream));
  dcuda_wait_notifications_on_stream(job.context, me, 9, 1, reader.stream);
  dcuda_get_on_stream(job.context, job.win, me, 0, size, copied.data, reader.stream);
  count_wrong_kernel<<<64, 256, 0, reader.stream>>>(copied.data, size, 71, job.wrong.data);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  DCUDA_CHECK(cudaStreamQuery(reader.stream) == cudaErrorNotReady);
  fill_kernel<<<64, 256, 0, writer.stream>>>(job.source.data, size, 71);
  dcuda_put_notify_on_stream(job.context, job.win, me, 0, size, job.source.data, 9, writer.stream);
  GPU_CHECK(cudaStreamSynchronize(reader.stream));
  DCUDA_CHECK_EQ(read_back(job.wrong.data), 0);
  // Nothing to copy: queued and checked, nothing written.
  dcuda_get_on_stream(job.context, job.win, me, window_bytes, 0, nullptr, reader.stream);
  GPU_CHECK(cudaStreamSynchronize(reader.stream));
}

// dcuda's stream kernels may start before the kernel ahead of them ends: they must still read
// the source only once that kernel is complete, even when it lets them start at once.
DCUDA_TEST(a_put_reads_its_source_after_a_kernel_that_lets_the_next_one_start_early) {
  require_gpu();
  constexpr int window_bytes = 8 << 20;
  const window_job job(window_bytes);
  stream_holder held;
  const int me = job.info.rank_start;
  // One block, several blocks, a full grid.
  int round = 0;
  for (int size : {8, 200000, window_bytes}) {
    const mapped_gate gate;
    early_trigger_fill_kernel<<<64, 256, 0, held.stream>>>(job.source.data, size, round,
                                                           gate.device);
    dcuda_put_notify_on_stream(job.context, job.win, me + 1, 0, size, job.source.data, 6,
                               held.stream);
    dcuda_wait_notifications_on_stream(job.context, me + 1, 6, 1, held.stream);
    count_wrong_kernel<<<64, 256, 0, held.stream>>>(job.window.data, size, round, job.wrong.data);
    // Long enough for the put's kernel to start and, were it not waiting, to copy.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.open();
    GPU_CHECK(cudaStreamSynchronize(held.stream));
    DCUDA_CHECK_EQ(read_back(job.wrong.data), 0);
    ++round;
  }
}

// Back-to-back puts of one stream into the same bytes land in their order (each kernel starts
// its copy after the one before has ended), and each counts once.
DCUDA_TEST(back_to_back_puts_into_the_same_bytes_land_in_stream_order) {
  require_gpu();
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(info);
  constexpr int size = 4 << 20;
  constexpr int puts = 12;
  device_buffer<unsigned char> window(size);
  device_buffer<unsigned char> sources(static_cast<std::size_t>(puts) * size);
  device_buffer<int> wrong(1);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, window.data, size, &win);
  stream_holder sender;
  stream_holder receiver;
  const int me = info.rank_start;
  for (int k = 0; k < puts; ++k) {
    fill_kernel<<<64, 256, 0, sender.stream>>>(sources.data + static_cast<std::size_t>(k) * size,
                                               size, 100 + k);
  }
  // Alternately a full grid and a smaller one, so that a copy that overtook the one before it
  // would leave the wrong bytes at least at the start of the window.
  for (int k = 0; k < puts; ++k) {
    const int bytes = k % 2 == 0 ? size : size / 4;
    dcuda_put_notify_on_stream(context, win, me, 0, bytes,
                               sources.data + static_cast<std::size_t>(k) * size, 7, sender.stream);
  }
  dcuda_wait_notifications_on_stream(context, me, 7, puts, receiver.stream);
  // The last put (a quarter) over the one before it (the whole window).
  count_wrong_kernel<<<64, 256, 0, receiver.stream>>>(window.data, size / 4, 100 + puts - 1,
                                                      wrong.data);
  GPU_CHECK(cudaStreamSynchronize(receiver.stream));
  DCUDA_CHECK_EQ(read_back(wrong.data), 0);
  GPU_CHECK(cudaMemset(wrong.data, 0, sizeof(int)));
  count_wrong_kernel<<<64, 256, 0, receiver.stream>>>(window.data + size / 4, size - size / 4,
                                                      100 + puts - 2, wrong.data);
  GPU_CHECK(cudaStreamSynchronize(receiver.stream));
  DCUDA_CHECK_EQ(read_back(wrong.data), 0);
  // Each put counted once: a further wait stays pending until one more notification.
  dcuda_wait_notifications_on_stream(context, me, 7, 1, receiver.stream);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  DCUDA_CHECK(cudaStreamQuery(receiver.stream) == cudaErrorNotReady);
  dcuda_notify_on_stream(context, win, me, 7, sender.stream);
  GPU_CHECK(cudaStreamSynchronize(receiver.stream));
  dcuda_host_win_free(context, win);
  dcuda_host_finish(context);
}

DCUDA_TEST(stream_waits_add_up_and_count_every_notification) {
  require_gpu();
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(info);
  device_buffer<unsigned char> window(64);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, window.data, 64, &win);
  stream_holder senders;
  stream_holder waiters;
  const int target = info.rank_start + 2;
  cudaEvent_t first = nullptr;
  cudaEvent_t second = nullptr;
  GPU_CHECK(cudaEventCreate(&first));
  GPU_CHECK(cudaEventCreate(&second));
  // The waits are queued first; 60 then 40 of 100 notifications, counted on another stream.
  dcuda_wait_notifications_on_stream(context, target, 9, 60, waiters.stream);
  GPU_CHECK(cudaEventRecord(first, waiters.stream));
  dcuda_wait_notifications_on_stream(context, target, 9, 40, waiters.stream);
  GPU_CHECK(cudaEventRecord(second, waiters.stream));
  for (int i = 0; i < 99; ++i) dcuda_notify_on_stream(context, win, target, 9, senders.stream);
  GPU_CHECK(cudaStreamSynchronize(senders.stream));
  GPU_CHECK(cudaEventSynchronize(first));  // 99 >= 60
  // The second wait needs 100 in all: it must still hold its stream.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  DCUDA_CHECK(cudaEventQuery(second) == cudaErrorNotReady);
  // Notifications of another tag or rank do not count for it.
  dcuda_notify_on_stream(context, win, target, 10, senders.stream);
  dcuda_notify_on_stream(context, win, target + 1, 9, senders.stream);
  GPU_CHECK(cudaStreamSynchronize(senders.stream));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  DCUDA_CHECK(cudaEventQuery(second) == cudaErrorNotReady);
  dcuda_notify_on_stream(context, win, target, 9, senders.stream);
  GPU_CHECK(cudaEventSynchronize(second));
  // Both other notifications are still there to be waited for.
  dcuda_wait_notifications_on_stream(context, target, 10, 1, waiters.stream);
  dcuda_wait_notifications_on_stream(context, target + 1, 9, 1, waiters.stream);
  GPU_CHECK(cudaStreamSynchronize(waiters.stream));
  cudaEventDestroy(first);
  cudaEventDestroy(second);
  dcuda_host_finish(context);
}

DCUDA_TEST(a_ready_operation_is_not_held_back_by_another_streams_kernel) {
  require_gpu();
  mapped_gate gate;
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(info);
  constexpr int bytes = 1 << 16;
  device_buffer<unsigned char> window(2 * bytes);
  device_buffer<unsigned char> sources(2 * bytes);
  device_buffer<int> wrong(1);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, window.data, 2 * bytes, &win);
  stream_holder slow;
  stream_holder fast;
  stream_holder reader;
  const int me = info.rank_start;
  fill_kernel<<<64, 256>>>(sources.data, bytes, 1);
  fill_kernel<<<64, 256>>>(sources.data + bytes, bytes, 2);
  GPU_CHECK(cudaDeviceSynchronize());
  // Issued first, but its stream is held by a kernel until the host opens the gate.
  gate_kernel<<<1, 1, 0, slow.stream>>>(gate.device);
  dcuda_put_notify_on_stream(context, win, me, 0, bytes, sources.data, 1, slow.stream);
  // Issued second, on a free stream.
  dcuda_put_notify_on_stream(context, win, me, bytes, bytes, sources.data + bytes, 2, fast.stream);
  dcuda_wait_notifications_on_stream(context, me, 2, 1, reader.stream);
  count_wrong_kernel<<<64, 256, 0, reader.stream>>>(window.data + bytes, bytes, 2, wrong.data);
  GPU_CHECK(cudaStreamSynchronize(reader.stream));
  // The second operation completed, and its bytes arrived, while the first is still held.
  DCUDA_CHECK_EQ(read_back(wrong.data), 0);
  DCUDA_CHECK(cudaStreamQuery(slow.stream) == cudaErrorNotReady);
  gate.open();
  dcuda_wait_notifications_on_stream(context, me, 1, 1, reader.stream);
  count_wrong_kernel<<<64, 256, 0, reader.stream>>>(window.data, bytes, 1, wrong.data);
  GPU_CHECK(cudaStreamSynchronize(reader.stream));
  DCUDA_CHECK_EQ(read_back(wrong.data), 0);
  dcuda_barrier_on_stream(context, reader.stream);  // alone: meets itself
  GPU_CHECK(cudaStreamSynchronize(reader.stream));
  dcuda_host_finish(context);
}

DCUDA_TEST(multi_block_puts_on_several_streams_count_once_after_all_their_bytes) {
  require_gpu();
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(info);
  constexpr int streams = 4;
  constexpr int rounds = 6;
  constexpr int region = 12 << 20;  // each stream's part of the window and of the sources
  device_buffer<unsigned char> window(streams * region);
  device_buffer<unsigned char> sources(streams * region);
  device_buffer<int> wrong(1);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, window.data, streams * region, &win);
  // Blocking streams (cudaStreamCreate), as most programs make them: a put's first use of its
  // stream must not wait for the waits queued on the others. Each put is checked on a stream of
  // its own, which only the notification orders after the put: a count before the last block's
  // bytes shows as wrong bytes.
  blocking_stream senders[streams];
  blocking_stream receivers[streams];
  const int me = info.rank_start;
  // From one block and a byte beyond the single-block limit (a byte in the last block) to more
  // blocks than the GPU has multiprocessors (the grid then loops). 30000 bytes in one block and
  // 10 MiB in a full grid: some threads copy several 16-byte words at a time (loaded together,
  // then stored), then the rest of the words one at a time, then a tail of bytes.
  const int sizes[] = {(32 << 10) + 1, 200000, (10 << 20) + 3, 1 << 20, 30000};
  // Offsets into the target and the source part: aligned, aligned alike after a head of bytes,
  // aligned differently (a byte per store up to 32 KiB, the copy engines above).
  const int target_shift[streams] = {0, 5, 3, 0};
  const int source_shift[streams] = {0, 5, 7, 0};
  for (int round = 0; round < rounds; ++round) {
    for (int s = 0; s < streams; ++s) {
      const int size = sizes[(round + s) % 5];
      const int seed = round * streams + s;
      const int offset = s * region + target_shift[s];
      // The wait is queued before the put it waits for.
      dcuda_wait_notifications_on_stream(context, me, 20 + s, 1, receivers[s].stream);
      count_wrong_kernel<<<64, 256, 0, receivers[s].stream>>>(window.data + offset, size, seed,
                                                              wrong.data);
      unsigned char* source = sources.data + s * region + source_shift[s];
      fill_kernel<<<64, 256, 0, senders[s].stream>>>(source, size, seed);
      dcuda_put_notify_on_stream(context, win, me, offset, size, source, 20 + s, senders[s].stream);
    }
    // The next round writes the same bytes again: after this round's checks.
    GPU_CHECK(cudaDeviceSynchronize());
  }
  DCUDA_CHECK_EQ(read_back(wrong.data), 0);
  // Each put counted once: one more notification of each tag is still to come.
  for (int s = 0; s < streams; ++s) {
    dcuda_wait_notifications_on_stream(context, me, 20 + s, 1, receivers[s].stream);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (blocking_stream& receiver : receivers) {
    DCUDA_CHECK(cudaStreamQuery(receiver.stream) == cudaErrorNotReady);
  }
  stream_holder sender;
  for (int s = 0; s < streams; ++s) dcuda_notify_on_stream(context, win, me, 20 + s, sender.stream);
  for (blocking_stream& receiver : receivers) GPU_CHECK(cudaStreamSynchronize(receiver.stream));
  // The legacy default stream (NULL) and the per-thread stream take arrival words too; each put
  // is checked on a non-blocking stream, which neither of them orders.
  const cudaStream_t special[2] = {nullptr, cudaStreamPerThread};
  stream_holder checker;
  for (int i = 0; i < 2; ++i) {
    dcuda_wait_notifications_on_stream(context, me, 30 + i, 1, checker.stream);
    count_wrong_kernel<<<64, 256, 0, checker.stream>>>(window.data + i * region, region, 90 + i,
                                                       wrong.data);
    fill_kernel<<<64, 256, 0, special[i]>>>(sources.data + i * region, region, 90 + i);
    dcuda_put_notify_on_stream(context, win, me, i * region, region, sources.data + i * region,
                               30 + i, special[i]);
  }
  GPU_CHECK(cudaStreamSynchronize(checker.stream));
  DCUDA_CHECK_EQ(read_back(wrong.data), 0);
  dcuda_host_win_free(context, win);
  dcuda_host_finish(context);
}

// ---- ranks count host-initiated notifications ----

namespace {

// What the host tells the ranks of host_notification_kernel, and what they answer.
struct mixed_notification_data {
  int phase;                    // 1: the first run, 2: the second
  int receiver;                 // world rank that waits
  const unsigned char* window;  // the host window, which a put_notify fills
  int size;                     // bytes the put_notify carries
  int seed;                     // fill_kernel's seed for them
  int wrong;                    // bytes the receiver found wrong after its wait
  int tests[3];                 // the receiver's dcuda_test_notifications results
};

constexpr int mixed_tag = 5;

__global__ void host_notification_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  mixed_notification_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (data->phase == 1) {
    // One notification from a rank, three from the host: the wait needs all four.
    if (rank == data->receiver + 1) dcuda_notify(gst, data->receiver, DCUDA_COMM_WORLD, mixed_tag);
    if (rank == data->receiver) {
      dcuda_wait_notifications(gst, mixed_tag, 4);
      for (int i = static_cast<int>(threadIdx.x); i < data->size; i += blockDim.x) {
        if (data->window[i] != static_cast<unsigned char>(i * 7 + data->seed)) {
          atomicAdd(&data->wrong, 1);
        }
      }
      const int left = dcuda_test_notifications(gst, mixed_tag, 1);
      if (threadIdx.x == 0) data->tests[0] = left;
    }
  } else if (rank == data->receiver) {
    // Two host notifications queued before this run; the first run's four stay consumed.
    const int three = dcuda_test_notifications(gst, mixed_tag, 3);
    const int two = dcuda_test_notifications(gst, mixed_tag, 2);
    const int one_more = dcuda_test_notifications(gst, mixed_tag, 1);
    if (threadIdx.x == 0) {
      data->tests[0] = three;
      data->tests[1] = two;
      data->tests[2] = one_more;
    }
  }
  dcuda_gpu_finish(gst);
}

// A context of 4 ranks running host_notification_kernel, with a host window the host's
// put_notify fills for the receiver (its second rank).
struct mixed_notification_job {
  static constexpr int window_bytes = 20000;
  dcuda_rank_info info{};
  dcuda_host_context_handle context = nullptr;
  device_buffer<unsigned char> window{window_bytes};
  device_buffer<unsigned char> source{window_bytes};
  dcuda_win win = DCUDA_WIN_NONE;
  int receiver = 0;

  mixed_notification_job() {
    load_kernels();
    context = start_dcuda(host_notification_kernel, 64, {"--dcuda-ranks-per-device=4"},
                          std::nullopt, info);
    dcuda_host_win_create(context, window.data, window_bytes, &win);
    receiver = info.rank_start + 1;
  }
  ~mixed_notification_job() {
    dcuda_host_win_free(context, win);
    dcuda_host_finish(context);
  }
  mixed_notification_job(const mixed_notification_job&) = delete;
  mixed_notification_job& operator=(const mixed_notification_job&) = delete;

  // The first run's three host notifications, on `stream`: a put_notify of the window's bytes
  // (fill_kernel's seed 3), then two notifications.
  void queue_host_notifications(cudaStream_t stream) {
    fill_kernel<<<64, 256, 0, stream>>>(source.data, window_bytes, 3);
    dcuda_put_notify_on_stream(context, win, receiver, 0, window_bytes, source.data, mixed_tag,
                               stream);
    dcuda_notify_on_stream(context, win, receiver, mixed_tag, stream);
    dcuda_notify_on_stream(context, win, receiver, mixed_tag, stream);
  }
  mixed_notification_data first_run_data() const {
    return {1, receiver, window.data, window_bytes, 3, 0, {-1, -1, -1}};
  }
  // The second run: two more host notifications queued before it on its stream; its receiver
  // finds those two and none of the first run's.
  void check_second_run(cudaStream_t stream) {
    dcuda_notify_on_stream(context, win, receiver, mixed_tag, stream);
    dcuda_notify_on_stream(context, win, receiver, mixed_tag, stream);
    mixed_notification_data data{2, receiver, window.data, 0, 0, 0, {-1, -1, -1}};
    dcuda_host_run_async(context, stream, &data, sizeof data);
    dcuda_host_run_wait(context);
    DCUDA_CHECK_EQ(data.tests[0], 0);
    DCUDA_CHECK_EQ(data.tests[1], 1);
    DCUDA_CHECK_EQ(data.tests[2], 0);
  }
};

}  // namespace

// Sequential (compute-sanitizer runs it): the host's operations are queued before each run on
// its stream.
DCUDA_TEST(
    a_ranks_wait_counts_host_notifications_queued_before_its_run_and_keeps_them_across_runs) {
  require_gpu();
  mixed_notification_job job;
  stream_holder stream;
  job.queue_host_notifications(stream.stream);
  mixed_notification_data data = job.first_run_data();
  dcuda_host_run_async(job.context, stream.stream, &data, sizeof data);
  dcuda_host_run_wait(job.context);
  DCUDA_CHECK_EQ(data.wrong, 0);
  DCUDA_CHECK_EQ(data.tests[0], 0);
  job.check_second_run(stream.stream);
}

// The host's operations are held until the run has started and queued while it runs, so the
// receiver waits for them while they arrive.
DCUDA_TEST(a_ranks_wait_counts_host_notifications_that_arrive_while_it_waits) {
  require_gpu();
  mixed_notification_job job;
  mapped_gate gate;
  stream_holder run_stream;
  stream_holder host_stream;
  mixed_notification_data data = job.first_run_data();
  dcuda_host_run_async(job.context, run_stream.stream, &data, sizeof data);
  gate_kernel<<<1, 1, 0, host_stream.stream>>>(gate.device);
  job.queue_host_notifications(host_stream.stream);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gate.open();
  dcuda_host_run_wait(job.context);
  GPU_CHECK(cudaStreamSynchronize(host_stream.stream));
  DCUDA_CHECK_EQ(data.wrong, 0);
  DCUDA_CHECK_EQ(data.tests[0], 0);
  job.check_second_run(run_stream.stream);
}

// ---- ranks put into host windows ----

namespace {

constexpr int rank_put_tag = 11;
constexpr int rank_own_tag = 12;

// What the host tells the ranks of rank_put_kernel, and what they answer.
struct rank_put_data {
  dcuda_win win;                // a host window of this process
  int sender;                   // world rank that puts
  int receiver;                 // world rank whose notifications are counted
  int bulk;                     // bytes of the put and put_notify counted by a stream wait
  const unsigned char* source;  // fill_kernel(seed) bytes: bulk, then 8 for the receiver
  const unsigned char* window;  // the host window as this GPU reads it
  int seed;
  int wrong;  // bytes the receiver found wrong after its own wait
  int left;   // notifications of rank_put_tag the receiver's dcuda_test_notifications found
};

// The sender puts the first half of `bulk` bytes, put_notifies the rest and then a notification
// without data, all for a stream wait of rank_put_tag; then 8 bytes after the bulk, notified with
// rank_own_tag, for the receiver's own dcuda_wait_notifications.
__global__ void rank_put_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  rank_put_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  const int half = data->bulk / 2;
  auto* source = const_cast<unsigned char*>(data->source);
  if (rank == data->sender) {
    dcuda_put(gst, data->win, data->receiver, 0, half, source);
    dcuda_put_notify(gst, data->win, data->receiver, half, data->bulk - half, source + half,
                     rank_put_tag);
    dcuda_put_notify(gst, data->win, data->receiver, 0, 0, source, rank_put_tag);
    dcuda_put_notify(gst, data->win, data->receiver, data->bulk, 8, source + data->bulk,
                     rank_own_tag);
    dcuda_win_flush(gst, data->win);
  }
  if (rank == data->receiver) {
    dcuda_wait_notifications(gst, rank_own_tag, 1);
    for (int i = data->bulk + static_cast<int>(threadIdx.x); i < data->bulk + 8; i += blockDim.x) {
      if (data->window[i] != static_cast<unsigned char>(i * 7 + data->seed)) {
        atomicAdd(&data->wrong, 1);
      }
    }
    // Its wait consumed the one notification of rank_own_tag: no second one.
    const int left = dcuda_test_notifications(gst, rank_own_tag, 1);
    if (threadIdx.x == 0) data->left = left;
  }
  dcuda_gpu_finish(gst);
}

// Ranks put into a host window during a run; a stream wait counts their notifications and sees
// their bytes (queued before the run, `wait_during_run`, or after it ended: the counts stay), and
// the rank the notifications are for counts them in its own waits too.
void check_rank_puts_into_a_host_window(bool wait_during_run) {
  load_kernels();
  constexpr int bulk = 20000;
  dcuda_rank_info info{};
  dcuda_host_context_handle context =
      start_dcuda(rank_put_kernel, 128, {"--dcuda-ranks-per-device=4"}, std::nullopt, info);
  device_buffer<unsigned char> window(bulk + 8);
  device_buffer<unsigned char> source(bulk + 8);
  device_buffer<int> wrong(1);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, window.data, bulk + 8, &win);
  fill_kernel<<<64, 256>>>(source.data, bulk + 8, 9);
  GPU_CHECK(cudaDeviceSynchronize());
  rank_put_data data{
      win, info.rank_start + 2, info.rank_start + 1, bulk, source.data, window.data, 9, 0, -1};
  stream_holder run_stream;
  stream_holder checker;
  // The put_notify and the notification without data make two.
  auto queue_check = [&] {
    dcuda_wait_notifications_on_stream(context, data.receiver, rank_put_tag, 2, checker.stream);
    count_wrong_kernel<<<64, 256, 0, checker.stream>>>(window.data, bulk, 9, wrong.data);
  };
  if (wait_during_run) queue_check();
  dcuda_host_run_async(context, run_stream.stream, &data, sizeof data);
  dcuda_host_run_wait(context);
  if (!wait_during_run) queue_check();
  GPU_CHECK(cudaStreamSynchronize(checker.stream));
  DCUDA_CHECK_EQ(read_back(wrong.data), 0);
  DCUDA_CHECK_EQ(data.wrong, 0);
  DCUDA_CHECK_EQ(data.left, 0);
  // Exactly two were counted: a third wait is held until the host adds one.
  dcuda_wait_notifications_on_stream(context, data.receiver, rank_put_tag, 1, checker.stream);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  DCUDA_CHECK(cudaStreamQuery(checker.stream) == cudaErrorNotReady);
  dcuda_notify_on_stream(context, win, data.receiver, rank_put_tag, run_stream.stream);
  GPU_CHECK(cudaStreamSynchronize(checker.stream));
  dcuda_host_win_free(context, win);
  dcuda_host_finish(context);
}

}  // namespace

// Sequential (compute-sanitizer runs it): the stream waits after the run.
DCUDA_TEST(a_stream_wait_after_the_run_counts_the_notifications_ranks_put_into_a_host_window) {
  require_gpu();
  check_rank_puts_into_a_host_window(false);
}

DCUDA_TEST(a_stream_wait_counts_the_notifications_ranks_put_into_a_host_window_as_they_arrive) {
  require_gpu();
  check_rank_puts_into_a_host_window(true);
}

// ---- errors: each in a child process, which must end with the message ----

namespace {

struct error_case {
  const char* scenario;
  const char* expected;
};

// A context with a host window of 256 bytes on a fresh stream, for the error scenarios.
struct error_setup {
  dcuda_rank_info info{};
  dcuda_host_context_handle context = nullptr;
  unsigned char* window = nullptr;
  dcuda_win win = DCUDA_WIN_NONE;
  cudaStream_t stream = nullptr;
  error_setup() {
    context = start_context(info);
    cudaMalloc(reinterpret_cast<void**>(&window), 256);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    dcuda_host_win_create(context, window, 256, &win);
  }
};

}  // namespace

DCUDA_CHILD(stream_put_outside_window) {
  error_setup setup;
  dcuda_put_on_stream(setup.context, setup.win, setup.info.rank_start + 1, 200, 57, setup.window,
                      setup.stream);
}

DCUDA_CHILD(stream_get_outside_window) {
  error_setup setup;
  dcuda_get_on_stream(setup.context, setup.win, setup.info.rank_start + 2, 250, 7, setup.window,
                      setup.stream);
}

DCUDA_CHILD(stream_get_into_null) {
  error_setup setup;
  dcuda_get_on_stream(setup.context, setup.win, setup.info.rank_start, 0, 16, nullptr,
                      setup.stream);
}

DCUDA_CHILD(stream_put_to_freed_window) {
  error_setup setup;
  dcuda_host_win_free(setup.context, setup.win);
  dcuda_put_notify_on_stream(setup.context, setup.win, 0, 0, 8, setup.window, 1, setup.stream);
}

DCUDA_CHILD(stream_notify_bad_tag) {
  error_setup setup;
  dcuda_notify_on_stream(setup.context, setup.win, setup.info.rank_start, 300, setup.stream);
}

DCUDA_CHILD(stream_notify_bad_rank) {
  error_setup setup;
  dcuda_notify_on_stream(setup.context, setup.win, setup.info.rank_count, 1, setup.stream);
}

DCUDA_CHILD(stream_wait_before_any_window) {
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(info);
  dcuda_wait_notifications_on_stream(context, 0, 1, 1, nullptr);
}

DCUDA_CHILD(stream_wait_never_satisfied) {
  error_setup setup;
  dcuda_notify_on_stream(setup.context, setup.win, setup.info.rank_start + 3, 9, setup.stream);
  dcuda_wait_notifications_on_stream(setup.context, setup.info.rank_start + 3, 9, 2, setup.stream);
  cudaStreamSynchronize(setup.stream);  // held until the watchdog ends the process
  std::printf("the stuck wait was not reported\n");
}

DCUDA_CHILD(stream_wait_while_capturing) {
  error_setup setup;
  cudaStreamBeginCapture(setup.stream, cudaStreamCaptureModeRelaxed);
  dcuda_wait_notifications_on_stream(setup.context, setup.info.rank_start, 1, 1, setup.stream);
}

DCUDA_CHILD(stream_window_outside_allocation) {
  dcuda_rank_info info{};
  dcuda_host_context_handle context = start_context(info);
  unsigned char* memory = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&memory), 4096);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, memory + 4000, 200, &win);
}

// A rank's put into a host window with bad arguments (rank_put_data's fields reused: the sender
// puts `bulk` bytes at offset `seed` to the receiver, notified with tag `left`).
__global__ void bad_rank_put_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  rank_put_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (rank == data->sender) {
    dcuda_put_notify(gst, data->win, data->receiver, data->seed, data->bulk,
                     const_cast<unsigned char*>(data->source), data->left);
  }
  dcuda_gpu_finish(gst);
}

void run_bad_rank_put(int offset, int size, int tag, bool free_first, int receiver_shift) {
  load_kernels();
  dcuda_rank_info info{};
  dcuda_host_context_handle context =
      start_dcuda(bad_rank_put_kernel, 64, {"--dcuda-ranks-per-device=4"}, std::nullopt, info);
  unsigned char* window = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&window), 512);
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, window, 256, &win);
  if (free_first) dcuda_host_win_free(context, win);
  rank_put_data data{
      win, info.rank_start + 3, info.rank_start + receiver_shift, size, window, window, offset, 0,
      tag};
  dcuda_host_run(context, &data, sizeof data);
  std::printf("the bad put was not reported\n");
}

DCUDA_CHILD(rank_put_outside_host_window) {
  run_bad_rank_put(200, 57, 1, false, 1);
}
DCUDA_CHILD(rank_put_into_freed_host_window) {
  run_bad_rank_put(0, 8, 1, true, 1);
}
DCUDA_CHILD(rank_put_to_host_window_bad_tag) {
  run_bad_rank_put(0, 8, 256, false, 1);
}
DCUDA_CHILD(rank_put_to_host_window_bad_rank) {
  run_bad_rank_put(0, 8, 1, false, 1000);
}

DCUDA_TEST(a_ranks_bad_put_into_a_host_window_stops_the_run_with_the_call_and_value) {
  require_gpu();
  const error_case cases[] = {
      {"rank_put_outside_host_window",
       "in dcuda_put_notify: offset 200 + size 57 exceeds the 256-byte window of target rank"},
      {"rank_put_into_freed_host_window", "in dcuda_put_notify: window handle"},
      {"rank_put_to_host_window_bad_tag", "in dcuda_put_notify: tag 256 is outside 0..255"},
      {"rank_put_to_host_window_bad_rank", "in dcuda_put_notify: rank 1000 is outside"},
  };
  for (const error_case& c : cases) {
    const auto child = run_child(c.scenario);
    if (child.exit_code != 1 || !contains(child.output, c.expected)) {
      std::printf("%s (exit %d):\n%s\n", c.scenario, child.exit_code, child.output.c_str());
    }
    DCUDA_CHECK_EQ(child.exit_code, 1);
    DCUDA_CHECK(contains(child.output, c.expected));
    DCUDA_CHECK(contains(child.output, "rank 3 (thread"));
    DCUDA_CHECK(!contains(child.output, "was not reported"));
  }
  DCUDA_CHECK(contains(run_child("rank_put_into_freed_host_window").output,
                       "is not a host window of this run"));
}

DCUDA_TEST(stream_operations_refuse_bad_arguments_with_the_call_and_value) {
  require_gpu();
  const error_case cases[] = {
      {"stream_put_outside_window",
       "dcuda: error: dcuda_put_on_stream: bytes [200, 200 + 57) are outside window"},
      {"stream_put_to_freed_window", "dcuda: error: dcuda_put_notify_on_stream: window"},
      {"stream_get_outside_window",
       "dcuda: error: dcuda_get_on_stream: bytes [250, 250 + 7) are outside window"},
      {"stream_get_into_null",
       "dcuda: error: dcuda_get_on_stream: destination is NULL for 16 bytes from rank"},
      {"stream_notify_bad_tag", "dcuda: error: dcuda_notify_on_stream: tag 300 (rank"},
      {"stream_notify_bad_rank", "dcuda: error: dcuda_notify_on_stream: target rank"},
      {"stream_wait_before_any_window",
       "dcuda: error: dcuda_wait_notifications_on_stream: no host window exists yet"},
      {"stream_wait_while_capturing",
       "dcuda: error: dcuda_wait_notifications_on_stream: the stream is being captured"},
      {"stream_window_outside_allocation", "dcuda: error: dcuda_host_win_create: [" /* address */},
  };
  for (const error_case& c : cases) {
    const auto child = run_child(c.scenario);
    if (child.exit_code != 1 || !contains(child.output, c.expected)) {
      std::printf("%s (exit %d):\n%s\n", c.scenario, child.exit_code, child.output.c_str());
    }
    DCUDA_CHECK_EQ(child.exit_code, 1);
    DCUDA_CHECK(contains(child.output, c.expected));
  }
  const auto freed = run_child("stream_put_to_freed_window");
  DCUDA_CHECK(contains(freed.output, "was released by dcuda_host_win_free"));
  const auto outside = run_child("stream_window_outside_allocation");
  DCUDA_CHECK(contains(outside.output, "is not inside one device allocation of this process"));
}

DCUDA_TEST(a_stream_wait_that_never_completes_is_named_by_the_watchdog) {
  require_gpu();
  const auto child = run_child("stream_wait_never_satisfied", "DCUDA_WAIT_TIMEOUT=1");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output,
                       "dcuda: error: dcuda_wait_notifications_on_stream: a stream "
                       "has waited"));
  DCUDA_CHECK(contains(child.output, "for 2 notification(s) of tag 9 at rank"));
  DCUDA_CHECK(contains(child.output, "its counter must reach 2, it stands at 1"));
  DCUDA_CHECK(!contains(child.output, "was not reported"));
}
