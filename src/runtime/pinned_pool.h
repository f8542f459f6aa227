// Page-locked host buffers for the network path: the proxy stages payloads there on their way
// out of and into the GPU. Buffers are reused (cudaHostAlloc is slow, and cudaFreeHost
// synchronises the device, which must not happen while a persistent kernel runs): the pool
// grows on demand and frees everything when it is destroyed, after the kernel.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

namespace dcuda::runtime {

class pinned_pool {
 public:
  class buffer {
   public:
    buffer() = default;
    buffer(buffer&& other) noexcept;
    buffer& operator=(buffer&& other) noexcept;
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    ~buffer();

    char* data() const { return data_; }

   private:
    friend class pinned_pool;
    buffer(pinned_pool* pool, char* data, std::size_t capacity)
        : pool_(pool), data_(data), capacity_(capacity) {}
    pinned_pool* pool_ = nullptr;
    char* data_ = nullptr;
    std::size_t capacity_ = 0;
  };

  pinned_pool() = default;
  pinned_pool(const pinned_pool&) = delete;
  pinned_pool& operator=(const pinned_pool&) = delete;
  ~pinned_pool();

  // A buffer of at least `bytes` (sizes are rounded up to a power of two, at least 4 KiB).
  buffer take(std::size_t bytes);

 private:
  void give_back(char* data, std::size_t capacity);

  std::map<std::size_t, std::vector<char*>> free_;  // by capacity
  std::vector<char*> allocations_;
};

}  // namespace dcuda::runtime
