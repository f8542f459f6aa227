// Probe of the code the local latency path compiles to: the smallest kernel of two ranks that
// ping-pong a 4-byte put_notify on one GPU (thesis API only, so that it compiles against any
// version of dcuda). Not part of the build and never run: scripts/local_path_code.sh compiles it
// against a source tree and counts what ptxas made of it (instructions, calls, local-memory
// stores, barriers), which shows when code for other paths or diagnostics made the local path
// spill (docs/performance.md, "Local latency: the code it runs").
#include "dcuda_device.cu.h"

__global__ void __launch_bounds__(1024) local_path_probe(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, data + rank * 64, 256, &win);
  for (int i = 0; i < data[1000]; ++i) {
    if (rank == 0) {
      dcuda_put_notify(gst, win, 1, 0, 4, data, 1);
      dcuda_wait_notifications(gst, 1, 1);
    } else if (rank == 1) {
      dcuda_wait_notifications(gst, 1, 1);
      dcuda_put_notify(gst, win, 0, 0, 4, data + 64, 1);
    }
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}
