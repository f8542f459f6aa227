// Computation overlapped with the exchange: a 1-D periodic stencil (each cell becomes the mean of
// itself and its two neighbours) over many steps. Each step sends the rank's boundary cells into
// its neighbours' halos, computes the interior, which needs no halo, while they travel, then
// waits for its own halos and computes the two boundary cells. Checked against the CPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <dcuda/device.cuh>
#include <dcuda/host.h>

constexpr int cells = 1024;  // per rank
constexpr int steps = 100;
constexpr int stride = cells + 2;  // [left halo, cells..., right halo]

struct overlap_data {
  double* grid;  // per rank of this GPU: two generations of `stride` doubles, read and written
                 // in turn
};

__device__ void compute(const double* from, double* to, int first, int last) {
  for (int i = first + threadIdx.x; i <= last; i += blockDim.x)
    to[i] = (from[i - 1] + from[i] + from[i + 1]) / 3;
}

__global__ void overlap(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  overlap_data* data;
  dcuda_get_data(gst, (void**)&data);
  double* mine = data->grid + 2 * stride * blockIdx.x;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, mine, 2 * stride * sizeof(double), &win);
  const int left = (rank + size - 1) % size;
  const int right = (rank + 1) % size;

  for (int step = 0; step < steps; ++step) {
    // Generation step % 2 is read, the other written; the tag tells the steps' halos apart.
    const int now = (step % 2) * stride;
    double* from = mine + now;
    double* to = mine + stride - now;
    const int tag = step % 2;
    dcuda_put_notify(gst, win, left, (now + cells + 1) * sizeof(double), sizeof(double), &from[1],
                     tag);
    dcuda_put_notify(gst, win, right, now * sizeof(double), sizeof(double), &from[cells], tag);
    compute(from, to, 2, cells - 1);        // the interior, while the halos travel
    dcuda_wait_notifications(gst, tag, 2);  // both halos of this step
    compute(from, to, 1, 1);
    compute(from, to, cells, cells);
    __syncthreads();  // the next step sends cells this one wrote
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

static void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", call, cudaGetErrorString(status));
  std::exit(EXIT_FAILURE);
}

int main(int argc, char** argv) {
  dcuda_host_context_handle dcuda;
  dcuda_host_init(argc, argv, &dcuda, overlap, 128);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);

  // The whole line on the CPU, from the same start; this process's ranks are compared.
  const int total = info.rank_count * cells;
  std::vector<double> line(total), next(total);
  for (int g = 0; g < total; ++g) line[g] = g % 7;
  std::vector<double> grid(2 * stride * info.rank_responsible, 0.0);
  for (int r = 0; r < info.rank_responsible; ++r)
    for (int i = 0; i < cells; ++i)
      grid[2 * stride * r + 1 + i] = line[(info.rank_start + r) * cells + i];
  for (int step = 0; step < steps; ++step) {
    for (int g = 0; g < total; ++g)
      next[g] = (line[(g + total - 1) % total] + line[g] + line[(g + 1) % total]) / 3;
    line.swap(next);
  }

  overlap_data data;
  const size_t bytes = grid.size() * sizeof(double);
  check(cudaMalloc(&data.grid, bytes), "cudaMalloc");
  check(cudaMemcpy(data.grid, grid.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  const double milliseconds = dcuda_host_run(dcuda, &data, sizeof data);
  check(cudaMemcpy(grid.data(), data.grid, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");

  const int result = (steps % 2) * stride;  // the generation the last step wrote
  double worst = 0;
  for (int r = 0; r < info.rank_responsible; ++r)
    for (int i = 0; i < cells; ++i) {
      const double expected = line[(info.rank_start + r) * cells + i];
      worst = std::fmax(worst, std::fabs(grid[2 * stride * r + result + 1 + i] - expected));
    }
  const bool correct = worst < 1e-12;
  std::printf("%d ranks x %d cells, %d steps, process %d: kernel time %.3f ms; %s the CPU\n",
              info.rank_count, cells, steps, info.process_index, milliseconds,
              correct ? "matches" : "DIFFERS FROM");
  cudaFree(data.grid);
  dcuda_host_finish(dcuda);
  return correct ? EXIT_SUCCESS : EXIT_FAILURE;
}
