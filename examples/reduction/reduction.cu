// The distributed reduction of the dCUDA thesis, listings 3.1 (host) and 3.2 (device), as
// written there, with two changes marked "change": the receiving rank adds the received value in
// one thread (in the listing every thread of the block adds it, which races), and the result is
// checked against a sum computed on the CPU.
//
//   build/examples/reduction/reduction        # all resident ranks
//   DCUDA_RANKS_PER_DEVICE=8 build/examples/reduction/reduction
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "dcuda_host.h"
#include "dcuda_device.cu.h"

#define THREADS_PER_BLOCK 128

struct user_data {
  double* data;
  double* buffer;
  bool is_leader;
  double result;
};

__global__ void kernel(dcuda_context_handle dcuda) {
  int size, rank, local_size, local_rank;
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  dcuda_log log = dcuda_log_get(gst);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &local_size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &local_rank);
  user_data* data;
  dcuda_get_data(gst, (void**)&data);

  // create windows
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, data->data, 2 * local_size * blockDim.x * sizeof(double),
                   &win);

  // timing
  dcuda_start_cpu_timer(gst);

  // block reduction
  if (threadIdx.x == 0) {
    for (int i = 1; i < blockDim.x; i++)
      data->data[local_rank * blockDim.x] += data->data[local_rank * blockDim.x + i];
  }

  // global reduction
  int offset = (local_size * blockDim.x + rank) * sizeof(double);
  for (int step = 1, round = 0; step < size; step *= 2, round++) {
    int range = 2 * step;
    bool send = rank % range == step;
    bool recv = (rank % range == 0) && (rank + step < size);
    if (send) {
      dcuda_put_notify(gst, win, rank - step, offset, sizeof(double),
                       &data->data[local_rank * blockDim.x], round % 256);
    }
    if (recv) {
      dcuda_wait_notifications(gst, round % 256, 1);
      if (threadIdx.x == 0)  // change: one thread adds (the listing lets every thread add)
        data->data[local_rank * blockDim.x] += data->buffer[rank + step];
    }
  }

  dcuda_stop_cpu_timer(gst);
  if (rank == 0) {
    data->result = data->data[0];
    log << "result = " << data->result << log.flush;
  }

  // cleanup
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

int main(int argc, char** argv) {
  // dcuda initialization
  dcuda_host_context_handle dcuda_host;
  dcuda_host_init(argc, argv, &dcuda_host, kernel, THREADS_PER_BLOCK);
  user_data userdata;

  // rank information
  dcuda_rank_info rank_info;
  dcuda_host_get_rank_info(dcuda_host, &rank_info);
  int local_comm_size = rank_info.rank_responsible;
  userdata.is_leader = (rank_info.node_index == 0 && rank_info.device_index == 0);

  // data allocation
  int size = local_comm_size * THREADS_PER_BLOCK;
  cudaMalloc(&userdata.data, 2 * size * sizeof(double));
  userdata.buffer = &userdata.data[size];

  // data initialization
  double* init_data = (double*)malloc(size * sizeof(double));
  for (int i = 0; i < size; i++) {
    init_data[i] = std::rand();
  }

  // copy data to device
  cudaMemcpy(userdata.data, init_data, size * sizeof(double), cudaMemcpyHostToDevice);

  // run dcuda kernel
  dcuda_host_run(dcuda_host, &userdata, sizeof(userdata));

  // report result
  int status = EXIT_SUCCESS;
  if (userdata.is_leader) {
    double time = dcuda_host_get_timings(dcuda_host)[0];
    std::cout << "Sum = " << userdata.result << std::endl;
    std::cout << "Computation Time: " << time << " ms" << std::endl;

    // change: check against the CPU
    double expected = 0;
    for (int i = 0; i < size; i++) expected += init_data[i];
    const double relative = std::fabs(userdata.result - expected) / expected;
    std::cout << rank_info.rank_count << " ranks; CPU sum = " << expected << "; relative error "
              << relative << (relative < 1e-12 ? ": matches the CPU sum" : ": WRONG") << std::endl;
    if (relative >= 1e-12) status = EXIT_FAILURE;
  }

  // cleanup
  free(init_data);
  cudaFree(userdata.data);
  dcuda_host_finish(dcuda_host);
  return status;
}
