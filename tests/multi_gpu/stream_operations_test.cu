// Host windows and stream-ordered operations (dcuda/host_stream.h) across the processes of a
// node, one GPU each (or sharing GPUs, DCUDA_TEST_SHARE_GPUS=1), on the peer path and with the
// network path forced (DCUDA_FORCE_NETWORK=1): every process puts to every other on its stream,
// each byte checked where it lands by a kernel of the target's stream after its wait; a put whose
// stream is ready goes while another stream is held; ranks put into other processes' host windows
// for their streams and their ranks to wait on; the stream barrier orders plain puts; gets read
// every process's window on the node.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "dcuda/device.cuh"
#include "dcuda/host.h"
#include "dcuda/host_stream.h"
#include "gpu_harness.h"
#include "mpi_test_main.h"
#include "stream_gate.cuh"

namespace {

using mpi_test::process_count;
using mpi_test::process_index;

__global__ void idle_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  dcuda_gpu_finish(gst);
}

__host__ __device__ unsigned char pattern(int source, std::uint64_t offset, int round) {
  return static_cast<unsigned char>((offset * 131u + static_cast<std::uint64_t>(source) * 71u +
                                     static_cast<std::uint64_t>(round) * 17u) %
                                        251u +
                                    1u);
}

__global__ void fill_kernel(unsigned char* bytes, std::uint64_t size, int source, int round) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size;
       i += gridDim.x * blockDim.x) {
    bytes[i] = pattern(source, i, round);
  }
}

__global__ void count_wrong_kernel(const unsigned char* bytes, std::uint64_t size, int source,
                                   int round, int* wrong) {
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < size;
       i += gridDim.x * blockDim.x) {
    if (bytes[i] != pattern(source, i, round)) atomicAdd(wrong, 1);
  }
}

// Launches the plain kernels of this file once and waits for them, before any stream waits:
// under CUDA's lazy loading a kernel's first launch waits for the GPU's running work, and under
// compute-sanitizer it does so even when the kernel is loaded (docs/api.md).
void launch_kernels_once() {
  fill_kernel<<<1, 1>>>(nullptr, 0, 0, 0);
  count_wrong_kernel<<<1, 1>>>(nullptr, 0, 0, 0, nullptr);
  GPU_CHECK(cudaDeviceSynchronize());
}

// A context with a host window of `processes * chunk` bytes, a source buffer and a stream.
struct stream_job {
  dcuda_rank_info info{};
  dcuda_host_context_handle context = nullptr;
  std::vector<int> rank_starts;  // per process
  unsigned char* window = nullptr;
  unsigned char* source = nullptr;
  int* wrong = nullptr;
  dcuda_win win = DCUDA_WIN_NONE;
  cudaStream_t stream = nullptr;
  std::uint64_t chunk;

  explicit stream_job(std::uint64_t chunk_bytes) : chunk(chunk_bytes) {
    context =
        gpu_test::start_dcuda(idle_kernel, 64, {"--dcuda-ranks-per-device=3"}, std::nullopt, info);
    launch_kernels_once();  // on the GPU the context chose
    rank_starts.resize(static_cast<std::size_t>(process_count()));
    MPI_Allgather(&info.rank_start, 1, MPI_INT, rank_starts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    GPU_CHECK(cudaMalloc(&window, chunk * static_cast<std::uint64_t>(process_count())));
    GPU_CHECK(cudaMalloc(&source, chunk));
    GPU_CHECK(cudaMalloc(&wrong, sizeof(int)));
    GPU_CHECK(cudaMemset(wrong, 0, sizeof(int)));
    GPU_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    dcuda_host_win_create(context, window, chunk * static_cast<std::uint64_t>(process_count()),
                          &win);
  }
  ~stream_job() {
    dcuda_host_win_free(context, win);
    dcuda_host_finish(context);
    cudaStreamDestroy(stream);
    cudaFree(window);
    cudaFree(source);
    cudaFree(wrong);
  }
  stream_job(const stream_job&) = delete;
  stream_job& operator=(const stream_job&) = delete;

  int wrong_bytes() const {
    int host = 0;
    GPU_CHECK(cudaStreamSynchronize(stream));
    GPU_CHECK(cudaMemcpy(&host, wrong, sizeof host, cudaMemcpyDeviceToHost));
    return host;
  }
};

}  // namespace

DCUDA_TEST(stream_ordered_put_notify_reaches_every_process_at_every_size) {
  gpu_test::require_gpu();
  constexpr std::uint64_t chunk = std::uint64_t{4} << 20;
  stream_job job(chunk);
  const int me = process_index();
  const int processes = process_count();
  int round = 0;
  for (std::uint64_t size :
       {std::uint64_t{1}, std::uint64_t{8}, std::uint64_t{4096}, std::uint64_t{1} << 20, chunk}) {
    fill_kernel<<<128, 256, 0, job.stream>>>(job.source, size, me, round);
    for (int step = 1; step < processes; ++step) {
      const int target = (me + step) % processes;
      // Each target's second rank counts them: a notification names its rank, not its process.
      dcuda_put_notify_on_stream(job.context, job.win, job.rank_starts[target] + 1,
                                 chunk * static_cast<std::uint64_t>(me), size, job.source, 4,
                                 job.stream);
    }
    dcuda_wait_notifications_on_stream(job.context, job.info.rank_start + 1, 4, processes - 1,
                                       job.stream);
    for (int source = 0; source < processes; ++source) {
      if (source == me) continue;
      count_wrong_kernel<<<128, 256, 0, job.stream>>>(
          job.window + chunk * static_cast<std::uint64_t>(source), size, source, round, job.wrong);
    }
    // No process refills its source, or puts the next round, before every check of this one.
    dcuda_barrier_on_stream(job.context, job.stream);
    ++round;
  }
  DCUDA_CHECK_EQ(job.wrong_bytes(), 0);
}

namespace {

// What the host tells the ranks of host_notification_kernel, and what they answer.
struct mixed_notification_data {
  int receiver;       // this process's world rank that waits
  int next_receiver;  // the next process's
  int processes;
  const unsigned char* window;  // this process's host window: a chunk per sending process
  std::uint64_t chunk;
  int me;
  int round;
  int wrong;  // bytes the receiver found wrong after its wait
};

constexpr int mixed_tag = 6;

// Each process's first rank notifies the next process's receiver; the receiver waits for that
// and for the put_notify of every other process's host, then checks their bytes.
__global__ void host_notification_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  mixed_notification_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (rank == data->receiver - 1) {
    dcuda_notify(gst, data->next_receiver, DCUDA_COMM_WORLD, mixed_tag);
  }
  if (rank == data->receiver) {
    // A put_notify from every other process's host, a notification from the previous process's
    // first rank.
    dcuda_wait_notifications(gst, mixed_tag, data->processes);
    for (int source = 0; source < data->processes; ++source) {
      if (source == data->me) continue;
      const unsigned char* bytes = data->window + data->chunk * static_cast<std::uint64_t>(source);
      for (std::uint64_t i = threadIdx.x; i < data->chunk; i += blockDim.x) {
        if (bytes[i] != pattern(source, i, data->round)) atomicAdd(&data->wrong, 1);
      }
    }
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(a_ranks_wait_counts_the_host_notifications_of_every_process) {
  gpu_test::require_gpu();
  constexpr std::uint64_t chunk = std::uint64_t{1} << 16;
  dcuda_rank_info info{};
  dcuda_host_context_handle context = gpu_test::start_dcuda(
      host_notification_kernel, 128, {"--dcuda-ranks-per-device=3"}, std::nullopt, info);
  launch_kernels_once();  // on the GPU the context chose
  const int me = process_index();
  const int processes = process_count();
  std::vector<int> rank_starts(static_cast<std::size_t>(processes));
  MPI_Allgather(&info.rank_start, 1, MPI_INT, rank_starts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  unsigned char* window = nullptr;
  unsigned char* source = nullptr;
  GPU_CHECK(cudaMalloc(&window, chunk * static_cast<std::uint64_t>(processes)));
  GPU_CHECK(cudaMalloc(&source, chunk));
  dcuda_win win = DCUDA_WIN_NONE;
  dcuda_host_win_create(context, window, chunk * static_cast<std::uint64_t>(processes), &win);
  cudaStream_t run_stream = nullptr;
  cudaStream_t host_stream = nullptr;
  GPU_CHECK(cudaStreamCreateWithFlags(&run_stream, cudaStreamNonBlocking));
  GPU_CHECK(cudaStreamCreateWithFlags(&host_stream, cudaStreamNonBlocking));
  for (int round = 0; round < 3; ++round) {
    mixed_notification_data data{info.rank_start + 1,
                                 rank_starts[static_cast<std::size_t>((me + 1) % processes)] + 1,
                                 processes,
                                 window,
                                 chunk,
                                 me,
                                 round,
                                 0};
    // The puts go on a stream of their own while the run is under way.
    dcuda_host_run_async(context, run_stream, &data, sizeof data);
    fill_kernel<<<64, 256, 0, host_stream>>>(source, chunk, me, round);
    for (int step = 1; step < processes; ++step) {
      const int target = (me + step) % processes;
      dcuda_put_notify_on_stream(context, win, rank_starts[static_cast<std::size_t>(target)] + 1,
                                 chunk * static_cast<std::uint64_t>(me), chunk, source, mixed_tag,
                                 host_stream);
    }
    dcuda_host_run_wait(context);
    // No process refills its source, or puts the next round, before every check of this one.
    GPU_CHECK(cudaStreamSynchronize(host_stream));
    MPI_Barrier(MPI_COMM_WORLD);
    DCUDA_CHECK_EQ(data.wrong, 0);
  }
  dcuda_host_win_free(context, win);
  dcuda_host_finish(context);
  cudaStreamDestroy(run_stream);
  cudaStreamDestroy(host_stream);
  cudaFree(window);
  cudaFree(source);
}

namespace {

constexpr int rank_put_tag = 7;
constexpr int max_processes = 16;

// What the host tells the ranks of rank_put_kernel.
struct rank_put_data {
  dcuda_win win;  // the host window: a chunk per sending process
  int me;
  int processes;
  int rank_starts[max_processes];
  const unsigned char* source;  // pattern(me, i, round), on this GPU
  std::uint64_t chunk;
};

// Each process's third rank put_notifies its chunk into the host window of every other process,
// counted at that process's second rank, where a stream waits for it.
__global__ void rank_put_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  rank_put_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (rank == data->rank_starts[data->me] + 2) {
    for (int step = 1; step < data->processes; ++step) {
      const int target = (data->me + step) % data->processes;
      dcuda_put_notify(gst, data->win, data->rank_starts[target] + 1,
                       static_cast<int>(data->chunk) * data->me, static_cast<int>(data->chunk),
                       const_cast<unsigned char*>(data->source), rank_put_tag);
    }
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(a_stream_wait_counts_the_put_notify_of_ranks_of_every_process) {
  gpu_test::require_gpu();
  constexpr std::uint64_t chunk = std::uint64_t{1} << 16;
  const int me = process_index();
  const int processes = process_count();
  DCUDA_CHECK(processes <= max_processes);
  dcuda_rank_info info{};
  dcuda_host_context_handle context = gpu_test::start_dcuda(
      rank_put_kernel, 128, {"--dcuda-ranks-per-device=3"}, std::nullopt, info);
  launch_kernels_once();  // on the GPU the context chose
  rank_put_data data{};
  data.me = me;
  data.processes = processes;
  MPI_Allgather(&info.rank_start, 1, MPI_INT, data.rank_starts, 1, MPI_INT, MPI_COMM_WORLD);
  unsigned char* window = nullptr;
  unsigned char* source = nullptr;
  int* wrong = nullptr;
  GPU_CHECK(cudaMalloc(&window, chunk * static_cast<std::uint64_t>(processes)));
  GPU_CHECK(cudaMalloc(&source, chunk));
  GPU_CHECK(cudaMalloc(&wrong, sizeof(int)));
  GPU_CHECK(cudaMemset(wrong, 0, sizeof(int)));
  dcuda_host_win_create(context, window, chunk * static_cast<std::uint64_t>(processes), &data.win);
  data.source = source;
  data.chunk = chunk;
  cudaStream_t run_stream = nullptr;
  cudaStream_t check_stream = nullptr;
  GPU_CHECK(cudaStreamCreateWithFlags(&run_stream, cudaStreamNonBlocking));
  GPU_CHECK(cudaStreamCreateWithFlags(&check_stream, cudaStreamNonBlocking));
  for (int round = 0; round < 3; ++round) {
    fill_kernel<<<64, 256, 0, run_stream>>>(source, chunk, me, round);
    // Queued before the run: the check waits for every other process's rank.
    dcuda_wait_notifications_on_stream(context, info.rank_start + 1, rank_put_tag, processes - 1,
                                       check_stream);
    for (int from = 0; from < processes; ++from) {
      if (from == me) continue;
      count_wrong_kernel<<<64, 256, 0, check_stream>>>(
          window + chunk * static_cast<std::uint64_t>(from), chunk, from, round, wrong);
    }
    dcuda_host_run_async(context, run_stream, &data, sizeof data);
    dcuda_host_run_wait(context);
    GPU_CHECK(cudaStreamSynchronize(check_stream));
    // No process puts the next round before every check of this one.
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int host_wrong = -1;
  GPU_CHECK(cudaMemcpy(&host_wrong, wrong, sizeof host_wrong, cudaMemcpyDeviceToHost));
  DCUDA_CHECK_EQ(host_wrong, 0);
  dcuda_host_win_free(context, data.win);
  dcuda_host_finish(context);
  cudaStreamDestroy(run_stream);
  cudaStreamDestroy(check_stream);
  cudaFree(window);
  cudaFree(source);
  cudaFree(wrong);
}

namespace {

// The sizes a rank puts into another process's host window, each at its own offset: a compact
// entry (up to 8 B), a thread's copy (up to 16), a payload inside the command channel (up to
// 1 KiB) or staged from the rank's buffer, in one piece or in several of the network's 1 MiB.
__host__ __device__ constexpr int host_put_size(int i) {
  constexpr int sizes[] = {1, 3, 8, 13, 100, 1024, 1025, 70001, (5 << 19) + 3};
  return sizes[i];
}
constexpr int host_put_count = 9;
constexpr int thread_put_bytes = 16;                        // a dcuda_put_notify_thread after them
constexpr int host_put_gap = 7;                             // bytes left untouched after each put
constexpr int host_put_notifications = host_put_count + 1;  // per sending process
constexpr std::uint64_t host_put_region = std::uint64_t{4} << 20;  // per sending process

__host__ __device__ constexpr int host_put_offset(int i) {
  int offset = 0;
  for (int k = 0; k < i; ++k) offset += host_put_size(k) + host_put_gap;
  return offset;
}
constexpr int host_put_end = host_put_offset(host_put_count) + thread_put_bytes;
// How far into each region the check looks: the puts and 4 KiB past them, where nothing lands.
constexpr int host_put_checked = host_put_end + 4096;
static_assert(host_put_checked <= host_put_region);

struct host_put_data {
  dcuda_win win;
  int me;
  int processes;
  int round;
  int tag;
  int rank_waits;  // 1: the target rank waits and checks; 0: a stream of its process does
  int rank_starts[max_processes];
  unsigned char* source;        // pattern(me, i, round), on this GPU
  const unsigned char* window;  // this process's host window: a region per sending process
  int* wrong;
};

// Counts the wrong bytes of this process's host window after a round: each other process's region
// holds that process's pattern where its puts went and zeros elsewhere; this process's own region
// only zeros.
__device__ void count_wrong_host_put_bytes(const host_put_data& data, int thread, int threads) {
  for (int from = 0; from < data.processes; ++from) {
    const unsigned char* region = data.window + host_put_region * static_cast<std::uint64_t>(from);
    for (int i = thread; i < host_put_checked; i += threads) {
      int put = 0;
      while (put < host_put_count && i >= host_put_offset(put) + host_put_size(put)) ++put;
      const bool written =
          from != data.me &&
          (put == host_put_count ? i >= host_put_offset(host_put_count) && i < host_put_end
                                 : i >= host_put_offset(put));
      const unsigned char expected =
          written ? pattern(from, static_cast<std::uint64_t>(i), data.round) : 0;
      if (region[i] != expected) atomicAdd(data.wrong, 1);
    }
  }
}

__global__ void check_host_put_kernel(host_put_data data) {
  if (data.window == nullptr) return;  // the launch before any stream waits
  count_wrong_host_put_bytes(data, static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x),
                             static_cast<int>(gridDim.x * blockDim.x));
}

// Each process's third rank puts every size into its region of every other process's host
// window: even ones as put_notify, odd ones as a plain put that a put_notify of no bytes then
// notifies, then a thread-scoped put_notify; it flushes and overwrites its source (a staged put
// whose source was read after the flush would land the zeros). Each second rank waits for every
// notification and checks the window (rank_waits), or leaves that to a stream of its process.
__global__ void host_put_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  host_put_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  const int me = data->me;
  if (rank == data->rank_starts[me] + 2) {
    for (int step = 1; step < data->processes; ++step) {
      const int target = data->rank_starts[(me + step) % data->processes] + 1;
      const int region = static_cast<int>(host_put_region) * me;
      for (int i = 0; i < host_put_count; ++i) {
        const int at = host_put_offset(i);
        if (i % 2 == 0) {
          dcuda_put_notify(gst, data->win, target, region + at, host_put_size(i), data->source + at,
                           data->tag);
        } else {
          dcuda_put(gst, data->win, target, region + at, host_put_size(i), data->source + at);
          dcuda_put_notify(gst, data->win, target, region + at, 0, data->source, data->tag);
        }
      }
      const int at = host_put_offset(host_put_count);
      if (threadIdx.x == 0) {
        dcuda_put_notify_thread(gst, data->win, target, region + at, thread_put_bytes,
                                data->source + at, data->tag);
      }
      __syncthreads();
    }
    dcuda_win_flush(gst, data->win);
    for (int i = threadIdx.x; i < host_put_end; i += blockDim.x) data->source[i] = 0;
  } else if (rank == data->rank_starts[me] + 1 && data->rank_waits != 0) {
    dcuda_wait_notifications(gst, data->tag, (data->processes - 1) * host_put_notifications);
    count_wrong_host_put_bytes(*data, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
    // Every notification counted once: none is left.
    if (dcuda_test_notifications(gst, data->tag, 1) != 0 && threadIdx.x == 0) {
      atomicAdd(data->wrong, 1000000);
    }
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

// Ranks put into the host windows of other processes at every size a put takes a path of its
// own for: over NVLink (or within one GPU) on the peer path, through the host proxies on the
// network path. In the first round the target rank waits for them in the kernel; in the second a
// stream of the target's process does, which counts only the host-initiated counters (a count in
// the rank's own counters would hold it until the watchdog ends the test).
DCUDA_TEST(ranks_put_into_other_processes_host_windows_at_every_size_for_ranks_and_streams) {
  gpu_test::require_gpu();
  const int me = process_index();
  const int processes = process_count();
  DCUDA_CHECK(processes <= max_processes);
  dcuda_rank_info info{};
  dcuda_host_context_handle context = gpu_test::start_dcuda(
      host_put_kernel, 256, {"--dcuda-ranks-per-device=3"}, std::nullopt, info);
  launch_kernels_once();
  check_host_put_kernel<<<1, 1>>>(host_put_data{});
  GPU_CHECK(cudaDeviceSynchronize());
  host_put_data data{};
  data.me = me;
  data.processes = processes;
  MPI_Allgather(&info.rank_start, 1, MPI_INT, data.rank_starts, 1, MPI_INT, MPI_COMM_WORLD);
  const std::uint64_t window_bytes = host_put_region * static_cast<std::uint64_t>(processes);
  unsigned char* window = nullptr;
  GPU_CHECK(cudaMalloc(&window, window_bytes));
  GPU_CHECK(cudaMalloc(&data.source, host_put_region));
  GPU_CHECK(cudaMalloc(&data.wrong, sizeof(int)));
  GPU_CHECK(cudaMemset(data.wrong, 0, sizeof(int)));
  data.window = window;
  dcuda_host_win_create(context, window, window_bytes, &data.win);
  gpu_test::stream_holder check;
  for (int round = 0; round < 2; ++round) {
    data.round = round;
    data.tag = 11 + round;  // each (rank, tag) consumed by a rank or by a stream, not both
    data.rank_waits = round == 0 ? 1 : 0;
    GPU_CHECK(cudaMemset(window, 0, window_bytes));
    fill_kernel<<<64, 256>>>(data.source, host_put_region, me, round);
    GPU_CHECK(cudaDeviceSynchronize());
    if (data.rank_waits == 0) {
      dcuda_wait_notifications_on_stream(context, info.rank_start + 1, data.tag,
                                         (processes - 1) * host_put_notifications, check.stream);
      check_host_put_kernel<<<64, 256, 0, check.stream>>>(data);
    }
    // No process puts before every window is cleared.
    MPI_Barrier(MPI_COMM_WORLD);
    dcuda_host_run(context, &data, sizeof data);
    GPU_CHECK(cudaStreamSynchronize(check.stream));
  }
  int wrong = -1;
  GPU_CHECK(cudaMemcpy(&wrong, data.wrong, sizeof wrong, cudaMemcpyDeviceToHost));
  DCUDA_CHECK_EQ(wrong, 0);
  // Every process has checked its window before any frees its buffers.
  MPI_Barrier(MPI_COMM_WORLD);
  dcuda_host_win_free(context, data.win);
  dcuda_host_finish(context);
  cudaFree(window);
  cudaFree(data.source);
  cudaFree(data.wrong);
}

DCUDA_TEST(the_stream_barrier_orders_plain_puts_between_processes) {
  gpu_test::require_gpu();
  constexpr std::uint64_t chunk = 1 << 16;
  stream_job job(chunk);
  const int me = process_index();
  const int processes = process_count();
  const int next = (me + 1) % processes;
  const int previous = (me + processes - 1) % processes;
  for (int round = 0; round < 20; ++round) {
    fill_kernel<<<64, 256, 0, job.stream>>>(job.source, chunk, me, round);
    dcuda_put_on_stream(job.context, job.win, job.rank_starts[next], 0, chunk, job.source,
                        job.stream);
    dcuda_win_flush_on_stream(job.context, job.win, job.stream);
    dcuda_barrier_on_stream(job.context, job.stream);  // every put of the round has landed
    count_wrong_kernel<<<64, 256, 0, job.stream>>>(job.window, chunk, previous, round, job.wrong);
    dcuda_barrier_on_stream(job.context, job.stream);  // every check is done before the next put
  }
  DCUDA_CHECK_EQ(job.wrong_bytes(), 0);
}

// Every process reads every process's window with gets on its stream, after a stream barrier:
// each byte as its owner's kernel wrote it in that round.
DCUDA_TEST(stream_ordered_gets_read_every_processs_window_on_the_node) {
  gpu_test::require_gpu();
  const char* forced = std::getenv("DCUDA_FORCE_NETWORK");
  const char* emulated = std::getenv("DCUDA_EMULATE_NODES");
  if ((forced != nullptr && std::string(forced) == "1") ||
      (emulated != nullptr && std::atoi(emulated) > 1)) {
    throw dcuda_test::skip{
        "a stream get reads the processes of one node; this run reaches the other processes "
        "through the network (the refusal is the stream_get_through_network fault job)"};
  }
  constexpr std::uint64_t chunk = 1 << 16;
  stream_job job(chunk);
  const int me = process_index();
  const int processes = process_count();
  gpu_test::device_buffer<unsigned char> copied(chunk);
  for (int round = 0; round < 4; ++round) {
    fill_kernel<<<64, 256, 0, job.stream>>>(job.window + chunk, chunk, me, round);
    dcuda_barrier_on_stream(job.context, job.stream);  // every window written
    for (int p = 0; p < processes; ++p) {
      dcuda_get_on_stream(job.context, job.win, job.rank_starts[static_cast<std::size_t>(p)] + 1,
                          chunk, chunk, copied.data, job.stream);
      count_wrong_kernel<<<64, 256, 0, job.stream>>>(copied.data, chunk, p, round, job.wrong);
    }
    dcuda_barrier_on_stream(job.context, job.stream);  // every get done before the next writes
  }
  DCUDA_CHECK_EQ(job.wrong_bytes(), 0);
}

namespace {

__global__ void gate_kernel(const int* gate) {
  gpu_test::wait_at_gate(gate);
}

}  // namespace

DCUDA_TEST(a_ready_stream_put_goes_while_another_stream_of_the_process_is_held) {
  gpu_test::require_gpu();
  constexpr std::uint64_t chunk = std::uint64_t{1} << 18;  // a quarter of the network chunk
  stream_job job(chunk);
  const int me = process_index();
  const int processes = process_count();
  const int next = (me + 1) % processes;
  const int previous = (me + processes - 1) % processes;
  constexpr int held_tag = 8;
  constexpr int free_tag = 9;
  unsigned char* second_source = nullptr;
  GPU_CHECK(cudaMalloc(&second_source, chunk));
  gpu_test::mapped_gate gate;
  {  // launched once before any stream waits, as launch_kernels_once does, through an open gate
    const gpu_test::mapped_gate open;
    open.open();
    gate_kernel<<<1, 1>>>(open.device);
    GPU_CHECK(cudaDeviceSynchronize());
  }
  gpu_test::stream_holder held;
  gpu_test::stream_holder check;
  // Stream `held`: a kernel that waits for the host, then a put_notify into the first chunk of
  // the next process's window. Stream `job.stream`: a put_notify into its second chunk at once.
  fill_kernel<<<64, 256, 0, held.stream>>>(job.source, chunk, me, 0);
  gate_kernel<<<1, 1, 0, held.stream>>>(gate.device);
  dcuda_put_notify_on_stream(job.context, job.win, job.rank_starts[next] + 1, 0, chunk, job.source,
                             held_tag, held.stream);
  fill_kernel<<<64, 256, 0, job.stream>>>(second_source, chunk, me, 1);
  dcuda_put_notify_on_stream(job.context, job.win, job.rank_starts[next] + 1, chunk, chunk,
                             second_source, free_tag, job.stream);
  // The previous process's free put arrives while its held stream (and this one's) still waits.
  dcuda_wait_notifications_on_stream(job.context, job.info.rank_start + 1, free_tag, 1,
                                     check.stream);
  count_wrong_kernel<<<64, 256, 0, check.stream>>>(job.window + chunk, chunk, previous, 1,
                                                   job.wrong);
  GPU_CHECK(cudaStreamSynchronize(check.stream));
  // Had the free put waited behind the held one, the gate would have timed out by now.
  DCUDA_CHECK_EQ(cudaStreamQuery(held.stream), cudaErrorNotReady);
  MPI_Barrier(MPI_COMM_WORLD);
  gate.open();
  dcuda_wait_notifications_on_stream(job.context, job.info.rank_start + 1, held_tag, 1,
                                     check.stream);
  count_wrong_kernel<<<64, 256, 0, check.stream>>>(job.window, chunk, previous, 0, job.wrong);
  GPU_CHECK(cudaStreamSynchronize(check.stream));
  GPU_CHECK(cudaStreamSynchronize(held.stream));
  DCUDA_CHECK_EQ(job.wrong_bytes(), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  cudaFree(second_source);
}
