// A 1-D halo exchange: the ranks own consecutive pieces of a periodic line of cells; each sends
// its first cell into the right halo of the rank before it and its last cell into the left halo
// of the rank after it, with dcuda_put_notify, waits for both of its halos and checks them.
#include <cstdio>
#include <cstdlib>

#include <dcuda/device.cuh>
#include <dcuda/host.h>

constexpr int cells = 256;  // per rank; each rank stores [left halo, cells..., right halo]

struct halo_data {
  double* line;  // (cells + 2) doubles per rank of this GPU
  int* wrong;    // ranks of this GPU whose halos are wrong
};

__global__ void halo_exchange(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  halo_data* data;
  dcuda_get_data(gst, (void**)&data);
  double* mine = data->line + (cells + 2) * blockIdx.x;
  for (int i = threadIdx.x; i < cells; i += blockDim.x)
    mine[1 + i] = rank * cells + i;  // global index
  __syncthreads();

  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, mine, (cells + 2) * sizeof(double), &win);
  const int left = (rank + size - 1) % size;
  const int right = (rank + 1) % size;
  const int right_halo = (cells + 1) * sizeof(double);
  dcuda_put_notify(gst, win, left, right_halo, sizeof(double), &mine[1], 0);
  dcuda_put_notify(gst, win, right, 0, sizeof(double), &mine[cells], 0);
  dcuda_wait_notifications(gst, 0, 2);  // both halos have arrived

  const bool left_ok = mine[0] == (left + 1) * cells - 1;  // its last cell
  const bool right_ok = mine[cells + 1] == right * cells;  // its first cell
  if (threadIdx.x == 0 && !(left_ok && right_ok)) atomicAdd(data->wrong, 1);
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
  dcuda_host_init(argc, argv, &dcuda, halo_exchange, 128);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);

  halo_data data;
  check(cudaMalloc(&data.line, info.rank_responsible * (cells + 2) * sizeof(double)), "cudaMalloc");
  check(cudaMalloc(&data.wrong, sizeof(int)), "cudaMalloc");
  check(cudaMemset(data.wrong, 0, sizeof(int)), "cudaMemset");
  dcuda_host_run(dcuda, &data, sizeof data);

  int wrong = 0;
  check(cudaMemcpy(&wrong, data.wrong, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::printf("halo exchange of %d ranks x %d cells, process %d: %s\n", info.rank_count, cells,
              info.process_index, wrong == 0 ? "correct" : "WRONG");
  cudaFree(data.line);
  cudaFree(data.wrong);
  dcuda_host_finish(dcuda);
  return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
