#include "runtime/pinned_pool.h"

#include <utility>

#include "runtime/error.h"

namespace dcuda::runtime {

pinned_pool::buffer::buffer(buffer&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)) {}

pinned_pool::buffer& pinned_pool::buffer::operator=(buffer&& other) noexcept {
  std::swap(pool_, other.pool_);
  std::swap(data_, other.data_);
  std::swap(capacity_, other.capacity_);
  return *this;
}

pinned_pool::buffer::~buffer() {
  if (pool_ != nullptr) pool_->give_back(data_, capacity_);
}

pinned_pool::~pinned_pool() {
  for (char* allocation : allocations_) cudaFreeHost(allocation);
}

pinned_pool::buffer pinned_pool::take(std::size_t bytes) {
  std::size_t capacity = 4096;
  while (capacity < bytes) capacity *= 2;
  auto& free_list = free_[capacity];
  if (!free_list.empty()) {
    char* data = free_list.back();
    free_list.pop_back();
    return buffer(this, data, capacity);
  }
  void* data = nullptr;
  DCUDA_CUDA_CHECK(cudaHostAlloc(&data, capacity, cudaHostAllocPortable));
  allocations_.push_back(static_cast<char*>(data));
  return buffer(this, static_cast<char*>(data), capacity);
}

void pinned_pool::give_back(char* data, std::size_t capacity) {
  free_[capacity].push_back(data);
}

}  // namespace dcuda::runtime
