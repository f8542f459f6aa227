// The first dcuda program: every rank sends its number to the next rank, around a ring, and
// checks the number it receives. Rank 0 logs what it got.
#include <cstdio>
#include <cstdlib>

#include <dcuda/device.cuh>
#include <dcuda/host.h>

struct ring_data {
  int* slots;  // two ints per rank of this GPU: [0] what it sends, [1] what it receives
  int* wrong;  // ranks of this GPU that received a wrong number
};

__global__ void ring(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  ring_data* data;
  dcuda_get_data(gst, (void**)&data);
  int* mine = data->slots + 2 * blockIdx.x;

  dcuda_win win;  // each rank exposes its two slots
  dcuda_win_create(gst, DCUDA_COMM_WORLD, mine, 2 * sizeof(int), &win);
  if (threadIdx.x == 0) mine[0] = rank;
  __syncthreads();
  dcuda_put_notify(gst, win, (rank + 1) % size, sizeof(int), sizeof(int), &mine[0], 0);
  dcuda_wait_notifications(gst, 0, 1);  // the previous rank's number has arrived

  const int previous = (rank + size - 1) % size;
  if (threadIdx.x == 0 && mine[1] != previous) atomicAdd(data->wrong, 1);
  dcuda_log log = dcuda_log_get(gst);
  if (rank == 0) log << "rank 0 received " << mine[1] << " from rank " << previous << log.flush;
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
  dcuda_host_init(argc, argv, &dcuda, ring, 128);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);

  ring_data data;
  check(cudaMalloc(&data.slots, 2 * info.rank_responsible * sizeof(int)), "cudaMalloc");
  check(cudaMalloc(&data.wrong, sizeof(int)), "cudaMalloc");
  check(cudaMemset(data.wrong, 0, sizeof(int)), "cudaMemset");
  dcuda_host_run(dcuda, &data, sizeof data);

  int wrong = 0;
  check(cudaMemcpy(&wrong, data.wrong, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::printf("ring of %d ranks, process %d: %s\n", info.rank_count, info.process_index,
              wrong == 0 ? "correct" : "WRONG");
  cudaFree(data.slots);
  cudaFree(data.wrong);
  dcuda_host_finish(dcuda);
  return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
