// RAII owners of the CUDA resources the case studies use, and the error check every CUDA call
// goes through: APP_CUDA(cudaMalloc(...)) throws std::runtime_error naming the call and the error.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
    clear();
  }
  // Back to the state of a new array (a repeated run starts from it).
  void clear() const { APP_CUDA(cudaMemset(data_, 0, bytes())); }
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

// The time a stream spends between begin() and end(), summed over every such interval (the NCCL
// baselines' communication time): events recorded around each interval on the stream, read once
// by total_ms() after the timed loop, since reading them earlier would synchronise the loop. Off
// (recording nothing) until start().
class stream_interval_timer {
 public:
  explicit stream_interval_timer(cudaStream_t stream) : stream_(stream) {}

  void start() {
    on_ = true;
    intervals_.clear();
  }
  void begin() {
    if (!on_) return;
    intervals_.emplace_back(std::make_unique<cuda_event>(), std::make_unique<cuda_event>());
    APP_CUDA(cudaEventRecord(intervals_.back().first->get(), stream_));
  }
  void end() {
    if (on_) APP_CUDA(cudaEventRecord(intervals_.back().second->get(), stream_));
  }
  double total_ms() {
    APP_CUDA(cudaStreamSynchronize(stream_));
    double total = 0;
    for (const auto& interval : intervals_) total += elapsed_ms(*interval.first, *interval.second);
    return total;
  }

 private:
  cudaStream_t stream_;
  bool on_ = false;
  // cuda_event does not move: the vector holds owners of them.
  std::vector<std::pair<std::unique_ptr<cuda_event>, std::unique_ptr<cuda_event>>> intervals_;
};
