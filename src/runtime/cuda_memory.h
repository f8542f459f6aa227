// RAII owners of the CUDA resources the runtime uses. Each frees what it holds exactly once;
// they move but do not copy.
#pragma once

#include <cstddef>
#include <cstring>
#include <utility>

#include "runtime/error.h"

namespace dcuda::runtime {

// Makes `device` current for its lifetime, then restores the caller's device: for code that
// serves any GPU of the process from whichever thread calls it (the datatypes' tables and copies).
class device_scope {
 public:
  explicit device_scope(int device) {
    DCUDA_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) DCUDA_CUDA_CHECK(cudaSetDevice(device));
  }
  ~device_scope() { cudaSetDevice(previous_); }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_ = 0;
};

// `count` objects of T in device memory.
template <typename T>
class device_array {
 public:
  device_array() = default;
  explicit device_array(std::size_t count) : count_(count) {
    if (count_ != 0)
      DCUDA_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
  }
  device_array(device_array&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  device_array& operator=(device_array&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~device_array() {
    if (data_ != nullptr) cudaFree(data_);
  }
  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  void zero_async(cudaStream_t stream) const {
    if (count_ != 0) DCUDA_CUDA_CHECK(cudaMemsetAsync(data_, 0, count_ * sizeof(T), stream));
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// `count` objects of T in page-locked host memory mapped into the device's address space:
// the host reads and writes it directly while a kernel runs.
template <typename T>
class mapped_array {
 public:
  mapped_array() = default;
  explicit mapped_array(std::size_t count) : count_(count) {
    if (count_ == 0) return;
    DCUDA_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host_), count_ * sizeof(T),
                                   cudaHostAllocMapped | cudaHostAllocPortable));
    DCUDA_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0));
    zero();
  }
  mapped_array(mapped_array&& other) noexcept
      : host_(std::exchange(other.host_, nullptr)),
        device_(std::exchange(other.device_, nullptr)),
        count_(std::exchange(other.count_, 0)) {}
  mapped_array& operator=(mapped_array&& other) noexcept {
    std::swap(host_, other.host_);
    std::swap(device_, other.device_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~mapped_array() {
    if (host_ != nullptr) cudaFreeHost(host_);
  }
  T* host() const { return host_; }
  T* device() const { return device_; }
  std::size_t size() const { return count_; }
  void zero() const {
    if (count_ != 0) std::memset(static_cast<void*>(host_), 0, count_ * sizeof(T));
  }

 private:
  T* host_ = nullptr;
  T* device_ = nullptr;
  std::size_t count_ = 0;
};

class cuda_stream {
 public:
  cuda_stream() { DCUDA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  ~cuda_stream() { cudaStreamDestroy(stream_); }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class cuda_event {
 public:
  cuda_event() { DCUDA_CUDA_CHECK(cudaEventCreate(&event_)); }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  ~cuda_event() { cudaEventDestroy(event_); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace dcuda::runtime
