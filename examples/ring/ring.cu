// The first dcuda program: every rank puts its number into the next rank's window, around a ring
// over every rank of every GPU, and checks the number it receives from the previous rank.
#include <cstdio>

#include <dcuda/device.cuh>
#include <dcuda/host.h>

struct ring_data {
  int* slots;  // two ints per rank of this GPU: [0] what it sends, [1] what it receives
  int* wrong;  // how many ranks of this GPU received a wrong number
};

__global__ void ring(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;  // the rank's state, in shared memory
  dcuda_gpu_init(dcuda, gst);  // all threads of every rank call dcuda together
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  ring_data* data;
  dcuda_get_data(gst, (void**)&data);  // the struct given to dcuda_host_run, on the GPU
  int* mine = data->slots + 2 * blockIdx.x;
  dcuda_win win;  // every rank exposes its two slots to the others
  dcuda_win_create(gst, DCUDA_COMM_WORLD, mine, 2 * sizeof(int), &win);
  if (threadIdx.x == 0) mine[0] = rank;
  __syncthreads();
  // Into slot [1] of the next rank, with a notification of tag 0 once the int is there.
  dcuda_put_notify(gst, win, (rank + 1) % size, sizeof(int), sizeof(int), &mine[0], /*tag=*/0);
  dcuda_wait_notifications(gst, /*tag=*/0, /*count=*/1);
  if (threadIdx.x == 0 && mine[1] != (rank + size - 1) % size) atomicAdd(data->wrong, 1);
  dcuda_log log = dcuda_log_get(gst);
  if (rank == 0) log << "ring of " << size << " ranks closed" << log.flush;
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

int main(int argc, char** argv) {
  dcuda_host_context_handle ctx;
  dcuda_host_init(argc, argv, &ctx, ring, /*threads_per_rank=*/128);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);  // the ranks this process runs, among all
  ring_data data;
  cudaMalloc(&data.slots, 2 * info.rank_responsible * sizeof(int));
  cudaMalloc(&data.wrong, sizeof(int));
  cudaMemset(data.wrong, 0, sizeof(int));
  dcuda_host_run(ctx, &data, sizeof data);  // runs the kernel on every GPU; blocks until it ends
  int wrong = -1;
  cudaMemcpy(&wrong, data.wrong, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("process %d: %s\n", info.process_index, wrong == 0 ? "correct" : "WRONG");
  cudaFree(data.slots);
  cudaFree(data.wrong);
  dcuda_host_finish(ctx);
  return wrong == 0 ? 0 : 1;
}
