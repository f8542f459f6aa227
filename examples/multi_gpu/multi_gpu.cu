// One program, several processes (one per GPU): start it with the launcher of your job,
//   mpirun -n 2 ./multi_gpu        srun --ntasks-per-node=4 --gpus-per-task=1 ./multi_gpu
// Each process prints where it stands (dcuda_rank_info), then every rank sends its number to the
// rank `shift` places further on, which lies in the next process when every process runs as many
// ranks, and checks the number it receives. Alone, the ranks send to themselves.
#include <cstdio>
#include <cstdlib>

#include <dcuda/device.cuh>
#include <dcuda/host.h>

struct exchange_data {
  int* slots;  // two ints per rank of this GPU: [0] what it sends, [1] what it receives
  int* wrong;  // ranks of this GPU that received a wrong number
  int shift;
};

__global__ void exchange(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  exchange_data* data;
  dcuda_get_data(gst, (void**)&data);
  int* mine = data->slots + 2 * blockIdx.x;

  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, mine, 2 * sizeof(int), &win);
  if (threadIdx.x == 0) mine[0] = rank;
  __syncthreads();
  dcuda_put_notify(gst, win, (rank + data->shift) % size, sizeof(int), sizeof(int), &mine[0], 0);
  dcuda_wait_notifications(gst, 0, 1);
  if (threadIdx.x == 0 && mine[1] != (rank + size - data->shift % size) % size)
    atomicAdd(data->wrong, 1);
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
  dcuda_host_init(argc, argv, &dcuda, exchange, 128);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(dcuda, &info);
  std::printf("process %d of %d: node %d of %d, GPU %d of %d on the node, ranks %d-%d of %d\n",
              info.process_index, info.process_count, info.node_index, info.node_count,
              info.device_index, info.device_count, info.rank_start,
              info.rank_start + info.rank_responsible - 1, info.rank_count);

  exchange_data data;
  data.shift = info.rank_count / info.process_count;  // the same in every process
  check(cudaMalloc(&data.slots, 2 * info.rank_responsible * sizeof(int)), "cudaMalloc");
  check(cudaMalloc(&data.wrong, sizeof(int)), "cudaMalloc");
  check(cudaMemset(data.wrong, 0, sizeof(int)), "cudaMemset");
  dcuda_host_run(dcuda, &data, sizeof data);

  int wrong = 0;
  check(cudaMemcpy(&wrong, data.wrong, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::printf("process %d: every rank received from the rank %d places before it: %s\n",
              info.process_index, data.shift, wrong == 0 ? "correct" : "WRONG");
  cudaFree(data.slots);
  cudaFree(data.wrong);
  dcuda_host_finish(dcuda);
  return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
