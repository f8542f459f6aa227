#include "runtime/pinned_pool.h"

#include <string>
#include <utility>

#include "runtime/error.h"

namespace dcuda::runtime {

pinned_pool::buffer::buffer(buffer&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_class_(std::exchange(other.size_class_, 0)) {}

pinned_pool::buffer& pinned_pool::buffer::operator=(buffer&& other) noexcept {
  std::swap(pool_, other.pool_);
  std::swap(data_, other.data_);
  std::swap(size_class_, other.size_class_);
  return *this;
}

pinned_pool::buffer::~buffer() {
  if (pool_ != nullptr) pool_->give_back(data_, size_class_);
}

pinned_pool::pinned_pool(std::size_t arena_bytes) : arena_bytes_(arena_bytes) {
  void* arena = nullptr;
  DCUDA_CUDA_CHECK(
      cudaHostAlloc(&arena, arena_bytes_, cudaHostAllocMapped | cudaHostAllocPortable));
  arena_ = static_cast<char*>(arena);
}

pinned_pool::~pinned_pool() {
  cudaFreeHost(arena_);
}

int pinned_pool::size_class_of(std::size_t bytes) {
  int size_class = 0;
  while (class_bytes(size_class) < bytes) ++size_class;
  return size_class;
}

bool pinned_pool::can_take(std::size_t bytes) const {
  const int size_class = size_class_of(bytes);
  if (outstanding_ == 0) return class_bytes(size_class) <= arena_bytes_;
  if (static_cast<std::size_t>(size_class) < free_.size() &&
      !free_[static_cast<std::size_t>(size_class)].empty()) {
    return true;
  }
  return carved_ + class_bytes(size_class) <= arena_bytes_;
}

std::optional<pinned_pool::buffer> pinned_pool::take(std::size_t bytes) {
  const int size_class = size_class_of(bytes);
  if (class_bytes(size_class) > arena_bytes_) {
    throw error("pinned staging: " + std::to_string(bytes) + " bytes do not fit the " +
                std::to_string(arena_bytes_) + "-byte arena");
  }
  if (outstanding_ == 0) {
    carved_ = 0;
    // The lists keep their storage: on the latency path one buffer is taken and given back per
    // operation, and freeing the lists each time made that two heap allocations.
    for (auto& free_list : free_) free_list.clear();
  }
  if (free_.size() <= static_cast<std::size_t>(size_class)) {
    free_.resize(static_cast<std::size_t>(size_class) + 1);
  }
  auto& free_list = free_[static_cast<std::size_t>(size_class)];
  if (!free_list.empty()) {
    char* data = free_list.back();
    free_list.pop_back();
    ++outstanding_;
    return buffer(this, data, size_class);
  }
  if (carved_ + class_bytes(size_class) > arena_bytes_) return std::nullopt;
  char* data = arena_ + carved_;
  carved_ += class_bytes(size_class);
  ++outstanding_;
  return buffer(this, data, size_class);
}

void pinned_pool::give_back(char* data, int size_class) {
  free_[static_cast<std::size_t>(size_class)].push_back(data);
  --outstanding_;
}

}  // namespace dcuda::runtime
