// What the tests of stream-ordered calls share: a gate that holds a stream from the host's side
// (a kernel spinning on a word of mapped host memory until the host sets it), and a stream that
// frees itself.
#pragma once

#include <cuda_runtime.h>

#include "gpu_harness.h"

namespace gpu_test {

// Spins until the host sets `*gate`, or 20 s passed (the host never opened it: the test fails
// on what the stream did meanwhile); whether it was opened.
__device__ inline bool wait_at_gate(const volatile int* gate) {
  unsigned long long began = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(began));
  for (;;) {
    if (*gate != 0) return true;
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - began > 20'000'000'000ull) return false;
  }
}

// The gate's word: pinned host memory, mapped into the GPU.
struct mapped_gate {
  int* host = nullptr;
  int* device = nullptr;
  mapped_gate() {
    GPU_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(int), cudaHostAllocMapped));
    GPU_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0));
    *host = 0;
  }
  ~mapped_gate() { cudaFreeHost(host); }
  mapped_gate(const mapped_gate&) = delete;
  mapped_gate& operator=(const mapped_gate&) = delete;
  void open() const { *reinterpret_cast<volatile int*>(host) = 1; }
};

struct stream_holder {
  cudaStream_t stream = nullptr;
  stream_holder() { GPU_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~stream_holder() { cudaStreamDestroy(stream); }
  stream_holder(const stream_holder&) = delete;
  stream_holder& operator=(const stream_holder&) = delete;
};

}  // namespace gpu_test
