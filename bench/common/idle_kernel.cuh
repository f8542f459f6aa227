// The kernel of a dcuda context whose work is host-initiated (dcuda/host_stream.h): the stream
// operations need no run of it, so it only joins and leaves. One definition for the benchmarks
// that drive dcuda from the host.
#pragma once

#include "dcuda/device.cuh"

namespace dcuda_bench {

__global__ void idle_kernel(dcuda_context_handle ctx) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(ctx, gst);
  dcuda_gpu_finish(gst);
}

}  // namespace dcuda_bench
