// RAII owners of the CUDA resources the case studies use, and the error check every CUDA call
// goes through: APP_CUDA(cudaMalloc(...)) throws std::runtime_error naming the call and the error.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                             cudaGetErrorString(status) + ")");
}
#define APP_CUDA(call) check_cuda((call), #call)

// count elements of T in device memory, zeroed.
template <typename T>
class device_array {
 public:
  explicit device_array(std::size_t count) : count_(count) {
    APP_CUDA(cudaMalloc(&data_, bytes()));
    APP_CUDA(cudaMemset(data_, 0, bytes()));
  }
  ~device_array() { cudaFree(data_); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

// count elements of T in pinned host memory (the staging buffers of host-staged MPI).
template <typename T>
class pinned_array {
 public:
  explicit pinned_array(std::size_t count) : count_(count) {
    APP_CUDA(cudaMallocHost(&data_, count * sizeof(T)));
  }
  ~pinned_array() { cudaFreeHost(data_); }
  pinned_array(const pinned_array&) = delete;
  pinned_array& operator=(const pinned_array&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

class cuda_stream {
 public:
  cuda_stream() { APP_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~cuda_stream() { cudaStreamDestroy(stream_); }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class cuda_event {
 public:
  cuda_event() { APP_CUDA(cudaEventCreate(&event_)); }
  ~cuda_event() { cudaEventDestroy(event_); }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds between two recorded events (both must have completed).
inline float elapsed_ms(const cuda_event& start, const cuda_event& stop) {
  float ms = 0;
  APP_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}
