// summa_model: the performance model (docs/model.md) against a distributed matrix multiplication.
// `mpirun -np G summa_model --model=FILE`, one process per GPU of one node (G = 1, 2, 4, ...).
//
// C = A B for N x N matrices of doubles by SUMMA on a q x q grid of dcuda ranks (default q = 8:
// 64 ranks, 64 / G per GPU), N = 512 to 16384: in each of q steps a rank of each row puts its A
// block to the other ranks of the row and a rank of each column its B block to the other ranks
// of the column (dcuda_put_notify; common/summa_schedule.h gives the order), every rank waits for
// the blocks it lacks; after a second world barrier (so that no rank computes while others
// communicate, as the model assumes) every rank multiplies them into its C block. A world barrier
// starts each step.
// Each rank times its communication of every step (from the barrier until its puts are issued
// and the blocks it needs are notified) with the GPU's global timer; the figure is the mean over
// ranks of their sum over the steps, the median of the repetitions.
//
// The reference column is the model's prediction of the same figure from the model file
// (--model=FILE, else DCUDA_MODEL_FILE): each put is the device-initiated single message of the
// block size over the same GPU or the peer path, and a sender's later puts wait for the
// pipelined time per message of the earlier ones (summa_schedule.h). Without a model file the
// benchmark stops before measuring, saying so. The C blocks are checked against sums computed
// on the host at 16 entries per rank (the matrices hold small integers: every sum is exact).
//
// --initiator=host: the same communication issued by the host instead, each rank's puts and waits
// on a stream of its own (dcuda_put_notify_on_stream, dcuda_wait_notifications_on_stream; see
// host_initiated_ms), predicted with the host-initiated fits of as many streams as the GPU's
// ranks that send (dcuda_model_predict_streams), the GPU starting its puts one after another and
// then passing its ranks' stream waits in turn (dcuda_model_predict_stream_waits;
// summa_schedule.h).
//
// Options (the other arguments go to dcuda): --sizes=N1,N2,... (multiples of 32 q), --grid=q,
// --model=FILE, --repetitions=R (default 3), --initiator=device|host (default device), --no-gate
// (host-initiated: each step starts as the host queues it, so the host's speed of queueing is
// timed too; for compute-sanitizer, whose serialised kernels the gate would keep waiting).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/host_gate.cuh"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "common/summa_schedule.h"
#include "dcuda/detail/device/clock.cuh"
#include "dcuda/device.cuh"
#include "dcuda/host_stream.h"
#include "dcuda/model.h"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "summa_model";
constexpr int threads_per_rank = 1024;
constexpr int tile = 32;  // the block multiplication's tile: b must be a multiple
constexpr int rows_per_thread = tile * tile / threads_per_rank;  // of a C tile
static_assert(rows_per_thread >= 1 && tile * tile % threads_per_rank == 0);
constexpr int max_repetitions = 15;
constexpr int a_tag = 0, b_tag = 1;

// The matrices' entries: small integers, so that every sum of products is exact in doubles.
__host__ __device__ inline double a_entry(long long row, long long column) {
  return static_cast<double>((row * 7 + column * 13) % 17 - 8);
}
__host__ __device__ inline double b_entry(long long row, long long column) {
  return static_cast<double>((row * 5 + column * 3) % 11 - 5);
}

struct summa_data {
  int side;        // q
  int block;       // b = N / q
  int first_rank;  // this GPU's first world rank
  int repetitions;
  // [local rank][4 * b * b], each rank's window (a put's source must lie in its window): its A
  // block, its B block, then the A and the B block it receives; row-major.
  double* windows;
  double* c;                             // [local rank][b * b]
  unsigned long long* communication_ns;  // [local rank][repetitions]
};

// Where the blocks of this GPU's rank `local` lie.
struct rank_blocks {
  double* a;         // its A block
  double* b;         // its B block
  double* received;  // the A block it receives, then the B block
  double* c;         // its C block
};
__host__ __device__ inline rank_blocks blocks_of(const summa_data& data, int local) {
  const long long block_doubles = static_cast<long long>(data.block) * data.block;
  double* a = data.windows + 4 * local * block_doubles;
  return {a, a + block_doubles, a + 2 * block_doubles, data.c + local * block_doubles};
}

// C += A B for b x b row-major blocks, by one rank: 32 x 32 tiles of C, each thread
// rows_per_thread entries of a column.
__device__ void multiply_add(const double* a, const double* b, double* c, int n) {
  __shared__ double a_tile[tile][tile + 1];
  __shared__ double b_tile[tile][tile + 1];
  const int t = static_cast<int>(threadIdx.x);
  const int column = t % tile, first_row = (t / tile) * rows_per_thread;
  for (int tile_row = 0; tile_row < n; tile_row += tile) {
    for (int tile_column = 0; tile_column < n; tile_column += tile) {
      double sum[rows_per_thread] = {};
      for (int k0 = 0; k0 < n; k0 += tile) {
        for (int e = t; e < tile * tile; e += threads_per_rank) {
          const int r = e / tile, s = e % tile;
          a_tile[r][s] = a[static_cast<long long>(tile_row + r) * n + k0 + s];
          b_tile[r][s] = b[static_cast<long long>(k0 + r) * n + tile_column + s];
        }
        __syncthreads();
        for (int k = 0; k < tile; ++k) {
          const double bk = b_tile[k][column];
          for (int e = 0; e < rows_per_thread; ++e) sum[e] += a_tile[first_row + e][k] * bk;
        }
        __syncthreads();
      }
      for (int e = 0; e < rows_per_thread; ++e) {
        c[static_cast<long long>(tile_row + first_row + e) * n + tile_column + column] += sum[e];
      }
    }
  }
}

// Rank (i, j)'s blocks of A and B, by the rank's threads.
__device__ void fill_blocks(double* a, double* b, int i, int j, int n) {
  const long long block_doubles = static_cast<long long>(n) * n;
  for (long long e = threadIdx.x; e < block_doubles; e += blockDim.x) {
    const long long row = e / n, column = e % n;
    a[e] = a_entry(static_cast<long long>(i) * n + row, static_cast<long long>(j) * n + column);
    b[e] = b_entry(static_cast<long long>(i) * n + row, static_cast<long long>(j) * n + column);
  }
}

__global__ void __launch_bounds__(threads_per_rank) summa_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  summa_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  const int q = data->side, n = data->block;
  const int i = rank / q, j = rank % q, local = rank - data->first_rank;
  const long long block_doubles = static_cast<long long>(n) * n;
  const int block_bytes = static_cast<int>(block_doubles * static_cast<long long>(sizeof(double)));
  const rank_blocks mine = blocks_of(*data, local);
  double *a = mine.a, *b = mine.b, *received = mine.received, *c = mine.c;
  fill_blocks(a, b, i, j, n);
  __syncthreads();
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, a, 4 * block_bytes, &win);

  for (int repetition = -1; repetition < data->repetitions; ++repetition) {  // -1: warm-up
    // Every thread's last stores into C of the repetition before (each thread owns other
    // entries in the multiplication than here) come before C is cleared.
    __syncthreads();
    for (long long e = threadIdx.x; e < block_doubles; e += blockDim.x) c[e] = 0;
    unsigned long long communication = 0;
    for (int step = 0; step < q; ++step) {
      // Every rank has multiplied the blocks of the step before: the receive areas are free.
      dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
      const std::uint64_t start = dcuda::device::global_time_ns();
      if (j == step) {
        for (int column = 0; column < q; ++column) {
          if (column != step) {
            dcuda_put_notify(gst, win, i * q + column, 2 * block_bytes, block_bytes, a, a_tag);
          }
        }
      }
      if (i == step) {
        for (int row = 0; row < q; ++row) {
          if (row != step) {
            dcuda_put_notify(gst, win, row * q + j, 3 * block_bytes, block_bytes, b, b_tag);
          }
        }
      }
      if (j != step) dcuda_wait_notifications(gst, a_tag, 1);
      if (i != step) dcuda_wait_notifications(gst, b_tag, 1);
      communication += dcuda::device::global_time_ns() - start;
      // The model describes puts alone: no rank multiplies while others still communicate.
      dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
      multiply_add(j == step ? a : received, i == step ? b : received + block_doubles, c, n);
    }
    if (repetition >= 0 && threadIdx.x == 0) {
      data->communication_ns[local * data->repetitions + repetition] = communication;
    }
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

// The host-initiated version's kernels: block `local` of the launch works for this GPU's rank
// `local`, as that rank does in summa_kernel.
__global__ void __launch_bounds__(threads_per_rank) fill_kernel(summa_data data) {
  const int local = static_cast<int>(blockIdx.x), rank = data.first_rank + local;
  const rank_blocks mine = blocks_of(data, local);
  fill_blocks(mine.a, mine.b, rank / data.side, rank % data.side, data.block);
}

__global__ void __launch_bounds__(threads_per_rank) multiply_kernel(summa_data data, int step) {
  const int local = static_cast<int>(blockIdx.x), rank = data.first_rank + local;
  const int i = rank / data.side, j = rank % data.side;
  const long long block_doubles = static_cast<long long>(data.block) * data.block;
  const rank_blocks mine = blocks_of(data, local);
  multiply_add(j == step ? mine.a : mine.received,
               i == step ? mine.b : mine.received + block_doubles, mine.c, data.block);
}

struct choices {
  std::vector<int> sizes = {512, 1024, 2048, 4096, 8192, 16384};
  int side = 8;
  int repetitions = 3;
  std::string model_file;
  bool host_initiated = false;  // --initiator=host
  bool gated = true;            // --no-gate: the host-initiated steps start as they are queued
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", benchmark, what.c_str());
  std::exit(2);
}

int positive(const std::string& option, const std::string& text, int highest) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > highest) {
    usage_error(option + ": '" + text + "' is not a whole number from 1 to " +
                std::to_string(highest));
  }
  return static_cast<int>(value);
}

// Takes --sizes, --grid, --model and --repetitions out of the arguments meant for dcuda.
choices take_choices(options& command_line) {
  choices chosen;
  std::vector<std::string> rest;
  for (const std::string& argument : command_line.dcuda_arguments) {
    const std::size_t equals = argument.find('=');
    const std::string name = argument.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : argument.substr(equals + 1);
    if (name == "--sizes") {
      chosen.sizes.clear();
      for (std::size_t at = 0; at <= value.size();) {
        const std::size_t comma = std::min(value.find(',', at), value.size());
        chosen.sizes.push_back(positive("--sizes", value.substr(at, comma - at), 65536));
        at = comma + 1;
      }
    } else if (name == "--grid") {
      chosen.side = positive("--grid", value, 64);
    } else if (name == "--repetitions") {
      chosen.repetitions = positive("--repetitions", value, max_repetitions);
    } else if (name == "--no-gate" && equals == std::string::npos) {
      chosen.gated = false;
    } else if (name == "--initiator") {
      if (value != "device" && value != "host") {
        usage_error("--initiator: '" + value + "' is neither device nor host");
      }
      chosen.host_initiated = value == "host";
    } else if (name == "--model") {
      if (value.empty()) usage_error("--model needs a file: --model=FILE");
      chosen.model_file = value;
    } else {
      rest.push_back(argument);
    }
  }
  command_line.dcuda_arguments = rest;
  return chosen;
}

// The device memory of one process's ranks: their windows (A and B blocks, two steps' worth),
// their C blocks and their per-repetition communication times.
struct device_blocks {
  device_bytes windows, c, communication_ns;
  device_blocks(int ranks, long long block_doubles, int repetitions)
      : windows(4 * doubles_of(ranks, block_doubles) * sizeof(double)),
        c(doubles_of(ranks, block_doubles) * sizeof(double)),
        communication_ns(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(repetitions) *
                         sizeof(unsigned long long)) {}

 private:
  static std::size_t doubles_of(int ranks, long long block_doubles) {
    return static_cast<std::size_t>(ranks) * static_cast<std::size_t>(block_doubles);
  }
};

// Entries of C checked against the host's sums: 16 per rank, spread over the block.
long long wrong_entries(const summa_data& data, int ranks_here, int matrix_size) {
  long long wrong = 0;
  const int n = data.block;
  for (int local = 0; local < ranks_here; ++local) {
    const int rank = data.first_rank + local;
    const long long i = rank / data.side, j = rank % data.side;
    for (int sample = 0; sample < 16; ++sample) {
      const long long row = (sample * 37 + local) % n, column = (sample * 53 + 7 * local) % n;
      double on_gpu = 0;
      BENCH_CUDA_CHECK(cudaMemcpy(&on_gpu,
                                  data.c + static_cast<long long>(local) * n * n + row * n + column,
                                  sizeof on_gpu, cudaMemcpyDeviceToHost));
      double expected = 0;
      for (long long k = 0; k < matrix_size; ++k) {
        expected += a_entry(i * n + row, k) * b_entry(k, j * n + column);
      }
      if (on_gpu != expected && ++wrong <= 4) {  // the first few, to say where
        std::fprintf(stderr,
                     "%s: N = %d: rank %d, C block (%lld, %lld), entry (%lld, %lld): %g, not %g\n",
                     benchmark, matrix_size, rank, i, j, row, column, on_gpu, expected);
      }
    }
  }
  return wrong;
}

// The host-initiated version of one multiplication, `data.repetitions` times after a warm-up:
// the same puts and waits issued by the host (dcuda_put_notify_on_stream and
// dcuda_wait_notifications_on_stream, in `win`, one host window over every rank's window of this
// process), each rank's on a stream of its own, so that the ranks' communication proceeds
// side by side as the ranks' own does in summa_kernel. A step starts once the host has queued all
// of it (host_gate) with dcuda_barrier_on_stream on the main stream, which every rank's stream
// then waits for; the multiplication (one kernel,
// a block per rank) follows a second barrier once every rank's stream is through. A rank's
// communication time of a step runs from the first barrier to its last wait (CUDA events).
// Returns, per repetition, the mean over every process's ranks of their sum over the steps, ms.
// The streams of the host-initiated version, created once for every size (dcuda keeps what it
// needs per stream).
struct host_streams {
  explicit host_streams(int ranks_per_gpu) : of_rank(static_cast<std::size_t>(ranks_per_gpu)) {}
  owned_stream main;
  std::vector<owned_stream> of_rank;
};

std::vector<double> host_initiated_ms(const mpi_world& world, dcuda_host_context_handle context,
                                      dcuda_win win, const summa_data& data, int ranks_per_gpu,
                                      const host_streams& streams, bool gated) {
  const int q = data.side;
  const std::size_t block_bytes =
      static_cast<std::size_t>(data.block) * static_cast<std::size_t>(data.block) * sizeof(double);
  const summa::grid grid{q, ranks_per_gpu};
  const owned_stream& main_stream = streams.main;
  const std::vector<owned_event> started(static_cast<std::size_t>(q));
  const std::vector<owned_event> finished(static_cast<std::size_t>(ranks_per_gpu * q));
  const auto finished_of = [&](int local, int step) { return finished[local * q + step].get(); };
  host_gate gate;
  unsigned steps_queued = 0;
  fill_kernel<<<ranks_per_gpu, threads_per_rank, 0, main_stream.get()>>>(data);
  BENCH_CUDA_CHECK(cudaGetLastError());
  std::vector<double> mean_ms;
  for (int repetition = -1; repetition < data.repetitions; ++repetition) {  // -1: warm-up
    BENCH_CUDA_CHECK(cudaMemsetAsync(data.c, 0, ranks_per_gpu * block_bytes, main_stream.get()));
    for (int step = 0; step < q; ++step) {
      if (gated) gate.queue(++steps_queued, main_stream.get());
      // Every process has multiplied the blocks of the step before: the receive areas are free.
      dcuda_barrier_on_stream(context, main_stream.get());
      BENCH_CUDA_CHECK(cudaEventRecord(started[step].get(), main_stream.get()));
      // Every rank's puts are queued before any rank's waits: streams share the GPU's hardware
      // queues (CUDA_DEVICE_MAX_CONNECTIONS), and a wait queued first would hold up the puts of
      // the streams behind it in its queue, the ones it waits for among them.
      for (int local = 0; local < ranks_per_gpu; ++local) {
        const int rank = data.first_rank + local;
        const cudaStream_t stream = streams.of_rank[local].get();
        const rank_blocks mine = blocks_of(data, local);
        BENCH_CUDA_CHECK(cudaStreamWaitEvent(stream, started[step].get(), 0));
        for (const int target : summa::targets(grid, rank, step)) {
          // A blocks go along the sender's row, B blocks along its column.
          const bool a_block = grid.row(target) == grid.row(rank);
          const int target_local = target - grid.gpu(target) * ranks_per_gpu;
          const std::size_t offset =
              (4 * static_cast<std::size_t>(target_local) + (a_block ? 2 : 3)) * block_bytes;
          dcuda_put_notify_on_stream(context, win, target, offset, block_bytes,
                                     a_block ? mine.a : mine.b, a_block ? a_tag : b_tag, stream);
        }
      }
      for (int local = 0; local < ranks_per_gpu; ++local) {
        const int rank = data.first_rank + local;
        const cudaStream_t stream = streams.of_rank[local].get();
        if (grid.column(rank) != step) {
          dcuda_wait_notifications_on_stream(context, rank, a_tag, 1, stream);
        }
        if (grid.row(rank) != step) {
          dcuda_wait_notifications_on_stream(context, rank, b_tag, 1, stream);
        }
        BENCH_CUDA_CHECK(cudaEventRecord(finished_of(local, step), stream));
        BENCH_CUDA_CHECK(cudaStreamWaitEvent(main_stream.get(), finished_of(local, step), 0));
      }
      // The model describes puts alone: no rank multiplies while others still communicate.
      dcuda_barrier_on_stream(context, main_stream.get());
      multiply_kernel<<<ranks_per_gpu, threads_per_rank, 0, main_stream.get()>>>(data, step);
      BENCH_CUDA_CHECK(cudaGetLastError());
      gate.open(steps_queued);
    }
    BENCH_CUDA_CHECK(cudaStreamSynchronize(main_stream.get()));
    if (gate.gave_up()) fail_job(benchmark, "a step's gate waited 60 s for the host");
    if (repetition < 0) continue;
    long long total_ns = 0;
    for (int local = 0; local < ranks_per_gpu; ++local) {
      for (int step = 0; step < q; ++step) {
        float milliseconds = 0;
        BENCH_CUDA_CHECK(
            cudaEventElapsedTime(&milliseconds, started[step].get(), finished_of(local, step)));
        total_ns += static_cast<long long>(static_cast<double>(milliseconds) * 1e6);
      }
    }
    mean_ms.push_back(static_cast<double>(world.sum(total_ns)) / (q * q) / 1e6);
  }
  return mean_ms;
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  options command_line = parse_options(
      argc, argv, benchmark,
      "SUMMA's communication time, measured against the performance model's prediction; run it "
      "as mpirun -np G, one process per GPU; options --sizes=N1,N2,... --grid=q --model=FILE "
      "--repetitions=R --initiator=device|host --no-gate");
  const choices chosen = take_choices(command_line);
  if (skip_for(world, world.one_node() ? gpu_shortage(world, world.processes())
                                       : "the processes run on more than one node; this "
                                         "benchmark measures the GPUs of one node"))
    return 0;
  const int q = chosen.side, gpus = world.processes();
  if ((q * q) % gpus != 0) {
    fail_job(benchmark, "the " + std::to_string(q * q) + " ranks of a " + std::to_string(q) +
                            " x " + std::to_string(q) + " grid do not divide among " +
                            std::to_string(gpus) + " GPUs");
  }
  for (int size : chosen.sizes) {
    const double window_bytes = 4.0 * (size / q) * (size / q) * sizeof(double);
    if (window_bytes > INT_MAX) {
      fail_job(benchmark, "--sizes: N = " + std::to_string(size) + " needs windows of " +
                              std::to_string(window_bytes) +
                              " bytes, above dcuda's int sizes: " + "choose a larger --grid");
    }
    if (size % (tile * q) != 0) {
      fail_job(benchmark, "--sizes: " + std::to_string(size) + " is not a multiple of " +
                              std::to_string(tile * q) + " (32 q)");
    }
  }
  const int ranks_per_gpu = q * q / gpus;
  const char* from_environment = std::getenv("DCUDA_MODEL_FILE");
  const std::string model_file = !chosen.model_file.empty()
                                     ? chosen.model_file
                                     : (from_environment != nullptr ? from_environment : "");
  if (model_file.empty()) {
    fail_job(benchmark,
             "no model file: give one with --model=FILE or DCUDA_MODEL_FILE (written "
             "by dcuda-model --write)");
  }
  dcuda_model_load(model_file.c_str());  // a bad file ends the run here, before measuring
  const dcuda_model_initiator initiator =
      chosen.host_initiated ? DCUDA_MODEL_HOST : DCUDA_MODEL_DEVICE;
  // Host-initiated puts of `streams` streams at once: the GPU's aggregate time per message from
  // that many streams (host_stream_concurrency's fit); a device rank's its own.
  const auto predict = [&](bool same_gpu, std::size_t bytes, int count, int streams) {
    const dcuda_model_path path = same_gpu ? DCUDA_MODEL_SAME_GPU : DCUDA_MODEL_PEER;
    return chosen.host_initiated
               ? dcuda_model_predict_streams(path, initiator, bytes, count, streams)
               : dcuda_model_predict(path, initiator, bytes, count);
  };
  // So does a model without the fits the prediction needs.
  predict(true, 8, 2, 2);
  if (gpus > 1) predict(false, 8, 2, 2);
  if (chosen.host_initiated) dcuda_model_predict_stream_waits(DCUDA_MODEL_SAME_GPU, 1, 2);

  std::vector<row> rows;
  {
    // Allocated once for the largest N, after dcuda chose this process's GPU, shared with the
    // other processes before any run (dcuda_host_share_memory: windows inside it need no mapping
    // while a kernel runs), and freed after dcuda_host_finish: declared before the session.
    std::optional<device_blocks> blocks;
    dcuda_session session(command_line, summa_kernel, threads_per_rank,
                          {"--dcuda-ranks-per-device=" + std::to_string(ranks_per_gpu)});
    const dcuda_rank_info& info = session.rank_info();
    if (info.rank_count != q * q || info.rank_responsible != ranks_per_gpu) {
      fail_job(benchmark, describe_rank_info(info) + ": expected " + std::to_string(ranks_per_gpu) +
                              " ranks per GPU (fewer fit?)");
    }
    const int largest_block = *std::max_element(chosen.sizes.begin(), chosen.sizes.end()) / q;
    blocks.emplace(ranks_per_gpu, static_cast<long long>(largest_block) * largest_block,
                   chosen.repetitions);
    dcuda_win host_window = DCUDA_WIN_NONE;
    std::optional<host_streams> streams;
    if (chosen.host_initiated) {
      streams.emplace(ranks_per_gpu);
      dcuda_host_win_create(session.context(), blocks->windows.get(), blocks->windows.size(),
                            &host_window);
    } else {
      dcuda_host_share_memory(session.context(), blocks->windows.get());
    }
    for (int size : chosen.sizes) {
      const int block = size / q;
      summa_data data{q,
                      block,
                      info.rank_start,
                      chosen.repetitions,
                      blocks->windows.get<double>(),
                      blocks->c.get<double>(),
                      blocks->communication_ns.get<unsigned long long>()};
      std::vector<double> mean_ms;
      if (chosen.host_initiated) {
        mean_ms = host_initiated_ms(world, session.context(), host_window, data, ranks_per_gpu,
                                    *streams, chosen.gated);
      } else {
        session.run(data);
        std::vector<unsigned long long> ns(
            static_cast<std::size_t>(ranks_per_gpu * chosen.repetitions));
        BENCH_CUDA_CHECK(cudaMemcpy(ns.data(), blocks->communication_ns.get(),
                                    ns.size() * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost));
        // Per repetition, the sum over this GPU's ranks; then over every GPU.
        for (int repetition = 0; repetition < chosen.repetitions; ++repetition) {
          long long total = 0;
          for (int local = 0; local < ranks_per_gpu; ++local) {
            total += static_cast<long long>(ns[local * chosen.repetitions + repetition]);
          }
          mean_ms.push_back(static_cast<double>(world.sum(total)) / (q * q) / 1e6);
        }
      }
      if (const long long wrong = world.sum(wrong_entries(data, ranks_per_gpu, size)); wrong > 0) {
        fail_job(benchmark, "N = " + std::to_string(size) + ": " + std::to_string(wrong) +
                                " sampled entries of C differ from the host's sums");
      }
      rows.push_back({static_cast<std::size_t>(size), median(mean_ms), 0,
                      *std::min_element(mean_ms.begin(), mean_ms.end()),
                      *std::max_element(mean_ms.begin(), mean_ms.end())});
    }
    if (chosen.host_initiated) dcuda_host_win_free(session.context(), host_window);
  }
  if (!world.prints()) return 0;

  const summa::grid grid{q, ranks_per_gpu};
  // Every rank of a GPU waits on a stream of its own.
  const double stream_wait_us = chosen.host_initiated ? dcuda_model_predict_stream_waits(
                                                            DCUDA_MODEL_SAME_GPU, 1, ranks_per_gpu)
                                                      : 0.0;
  for (row& r : rows) {
    const std::size_t n = r.size_bytes;  // the first column holds N here, not bytes
    const std::size_t bytes = (n / q) * (n / q) * sizeof(double);
    const summa::put_model cost = [&](bool same_gpu, int senders) {
      const double first = predict(same_gpu, bytes, 1, senders);
      return summa::put_cost{first, predict(same_gpu, bytes, 2, senders) - first};
    };
    r.reference =
        summa::predicted_mean_us(grid, cost,
                                 chosen.host_initiated ? summa::issuing::gpu_issues_in_turn
                                                       : summa::issuing::ranks_issue_apart,
                                 stream_wait_us) /
        1e3;
  }

  report out(benchmark, command_line, current_device());
  out.print(
      {"SUMMA, C = A B of N x N doubles on a " + std::to_string(q) + " x " + std::to_string(q) +
           " grid of ranks, " + std::to_string(ranks_per_gpu) + " per GPU on " +
           std::to_string(gpus) + " GPU(s), " + (chosen.host_initiated ? "host" : "device") +
           "-initiated: communication time per multiplication (mean over ranks)",
       "ms", "model",
       std::string(chosen.host_initiated ? "dcuda_model_predict_streams" : "dcuda_model_predict") +
           " with " + model_file + ": " + (chosen.host_initiated ? "host" : "device") +
           "-initiated puts of the block size, same GPU or peer path",
       q * q, threads_per_rank, 0, rows, "N"});
  std::vector<double> errors;
  for (const row& r : rows) errors.push_back(std::fabs(r.reference - r.dcuda) / r.dcuda);
  out.check(
      {"median error of the predicted communication time", "ratio", median(errors), 0.15, true});
  out.write_json();
  return 0;
}
