// Compiles against the installed headers with the thesis's include lines.
#include <iostream>

#include "dcuda_host.h"
#include "dcuda_device.cu.h"

bool consumer_version_matches();  // version.cpp

struct user_data {
  int ranks_seen;
};

__global__ void kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  user_data* data;
  dcuda_get_data(gst, (void**)&data);
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  dcuda_notify(gst, (rank + 1) % size, DCUDA_COMM_WORLD, 1);
  dcuda_wait_notifications(gst, 1, 1);
  if (rank == 0 && threadIdx.x == 0) data->ranks_seen = size;
  dcuda_gpu_finish(gst);
}

int main(int argc, char** argv) {
  if (!consumer_version_matches()) return 1;
  dcuda_host_context_handle ctx;
  dcuda_host_init(argc, argv, &ctx, kernel, 128);
  user_data data{0};
  dcuda_host_run(ctx, &data, sizeof(data));
  std::cout << "consumer: " << data.ranks_seen << " ranks notified each other" << std::endl;
  dcuda_host_finish(ctx);
  return data.ranks_seen > 0 ? 0 : 1;
}
