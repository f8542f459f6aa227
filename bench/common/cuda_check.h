// Host-side CUDA calls of the benchmarks: a failed call ends the benchmark with a FAIL line that
// names the call, and device memory is owned by an object that frees it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace dcuda_bench {

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "FAIL: %s:%d: %s: %s\n", file, line, call, cudaGetErrorString(status));
    std::exit(1);
  }
}

// Device memory of `bytes` bytes, freed with the object.
class device_bytes {
 public:
  explicit device_bytes(std::size_t bytes) : bytes_(bytes) {
    check_cuda(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc", __FILE__, __LINE__);
  }
  ~device_bytes() { cudaFree(data_); }
  device_bytes(const device_bytes&) = delete;
  device_bytes& operator=(const device_bytes&) = delete;

  template <typename T = unsigned char>
  T* get() const {
    return static_cast<T*>(data_);
  }
  std::size_t size() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

// Pinned host memory of `bytes` bytes, freed with the object; `flags` as cudaHostAlloc's
// (cudaHostAllocMapped: the GPU reads and writes it).
class pinned_bytes {
 public:
  explicit pinned_bytes(std::size_t bytes, unsigned flags = cudaHostAllocDefault) {
    check_cuda(cudaHostAlloc(&data_, bytes == 0 ? 1 : bytes, flags), "cudaHostAlloc", __FILE__,
               __LINE__);
  }
  ~pinned_bytes() { cudaFreeHost(data_); }
  pinned_bytes(const pinned_bytes&) = delete;
  pinned_bytes& operator=(const pinned_bytes&) = delete;

  template <typename T = unsigned char>
  T* get() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

// A non-blocking stream, destroyed with the object.
class owned_stream {
 public:
  owned_stream() {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags", __FILE__, __LINE__);
  }
  ~owned_stream() { cudaStreamDestroy(stream_); }
  owned_stream(const owned_stream&) = delete;
  owned_stream& operator=(const owned_stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// A CUDA event (with timing), destroyed with the object.
class owned_event {
 public:
  owned_event() { check_cuda(cudaEventCreate(&event_), "cudaEventCreate", __FILE__, __LINE__); }
  ~owned_event() { cudaEventDestroy(event_); }
  owned_event(const owned_event&) = delete;
  owned_event& operator=(const owned_event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace dcuda_bench

#define BENCH_CUDA_CHECK(call) ::dcuda_bench::check_cuda((call), #call, __FILE__, __LINE__)
