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
// Options (the other arguments go to dcuda): --sizes=N1,N2,... (multiples of 32 q), --grid=q,
// --model=FILE, --repetitions=R (default 3).
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
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "common/summa_schedule.h"
#include "dcuda/detail/device/clock.cuh"
#include "dcuda/device.cuh"
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
  double* a = data->windows + 4 * local * block_doubles;
  double* b = a + block_doubles;
  double* received = a + 2 * block_doubles;
  double* c = data->c + local * block_doubles;
  for (long long e = threadIdx.x; e < block_doubles; e += blockDim.x) {
    const long long row = e / n, column = e % n;
    a[e] = a_entry(static_cast<long long>(i) * n + row, static_cast<long long>(j) * n + column);
    b[e] = b_entry(static_cast<long long>(i) * n + row, static_cast<long long>(j) * n + column);
  }
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

struct choices {
  std::vector<int> sizes = {512, 1024, 2048, 4096, 8192, 16384};
  int side = 8;
  int repetitions = 3;
  std::string model_file;
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

template <typename T>
T* device_array(std::size_t count) {
  T* pointer = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&pointer, count * sizeof(T)));
  return pointer;
}

struct device_blocks {
  double *windows, *c;
  unsigned long long* communication_ns;
  device_blocks(int ranks, long long block_doubles, int repetitions) {
    const auto doubles = static_cast<std::size_t>(ranks) * static_cast<std::size_t>(block_doubles);
    windows = device_array<double>(4 * doubles);
    c = device_array<double>(doubles);
    communication_ns =
        device_array<unsigned long long>(static_cast<std::size_t>(ranks * repetitions));
  }
  ~device_blocks() {
    cudaFree(windows);
    cudaFree(c);
    cudaFree(communication_ns);
  }
  device_blocks(const device_blocks&) = delete;
  device_blocks& operator=(const device_blocks&) = delete;
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

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  options command_line = parse_options(
      argc, argv, benchmark,
      "SUMMA's communication time, measured against the performance model's prediction; run it "
      "as mpirun -np G, one process per GPU; options --sizes=N1,N2,... --grid=q --model=FILE "
      "--repetitions=R");
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
    dcuda_host_share_memory(session.context(), blocks->windows);
    for (int size : chosen.sizes) {
      const int block = size / q;
      summa_data data{q,
                      block,
                      info.rank_start,
                      chosen.repetitions,
                      blocks->windows,
                      blocks->c,
                      blocks->communication_ns};
      session.run(data);
      if (const long long wrong = world.sum(wrong_entries(data, ranks_per_gpu, size)); wrong > 0) {
        fail_job(benchmark, "N = " + std::to_string(size) + ": " + std::to_string(wrong) +
                                " sampled entries of C differ from the host's sums");
      }
      std::vector<unsigned long long> ns(
          static_cast<std::size_t>(ranks_per_gpu * chosen.repetitions));
      BENCH_CUDA_CHECK(cudaMemcpy(ns.data(), blocks->communication_ns,
                                  ns.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      // Per repetition, the sum over this GPU's ranks; then over every GPU.
      std::vector<double> mean_ms;
      for (int repetition = 0; repetition < chosen.repetitions; ++repetition) {
        long long total = 0;
        for (int local = 0; local < ranks_per_gpu; ++local) {
          total += static_cast<long long>(ns[local * chosen.repetitions + repetition]);
        }
        mean_ms.push_back(static_cast<double>(world.sum(total)) / (q * q) / 1e6);
      }
      rows.push_back({static_cast<std::size_t>(size), median(mean_ms), 0,
                      *std::min_element(mean_ms.begin(), mean_ms.end()),
                      *std::max_element(mean_ms.begin(), mean_ms.end())});
    }
  }
  if (!world.prints()) return 0;

  const summa::grid grid{q, ranks_per_gpu};
  for (row& r : rows) {
    const std::size_t n = r.size_bytes;  // the first column holds N here, not bytes
    const std::size_t bytes = (n / q) * (n / q) * sizeof(double);
    const summa::put_model cost = [&](bool same_gpu) {
      const dcuda_model_path path = same_gpu ? DCUDA_MODEL_SAME_GPU : DCUDA_MODEL_PEER;
      const double first = dcuda_model_predict(path, DCUDA_MODEL_DEVICE, bytes, 1);
      return summa::put_cost{first,
                             dcuda_model_predict(path, DCUDA_MODEL_DEVICE, bytes, 2) - first};
    };
    r.reference = summa::predicted_mean_us(grid, cost) / 1e3;
  }

  report out(benchmark, command_line, current_device());
  out.print({"SUMMA, C = A B of N x N doubles on a " + std::to_string(q) + " x " +
                 std::to_string(q) + " grid of ranks, " + std::to_string(ranks_per_gpu) +
                 " per GPU on " + std::to_string(gpus) +
                 " GPU(s): communication time per multiplication (mean over ranks)",
             "ms", "model",
             "dcuda_model_predict with " + model_file +
                 ": device-initiated puts of the block size, same GPU or peer path",
             q * q, threads_per_rank, 0, rows, "N"});
  std::vector<double> errors;
  for (const row& r : rows) errors.push_back(std::fabs(r.reference - r.dcuda) / r.dcuda);
  out.check(
      {"median error of the predicted communication time", "ratio", median(errors), 0.15, true});
  out.write_json();
  return 0;
}
