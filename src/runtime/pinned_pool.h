// Page-locked host memory for the network path: the proxy stages payloads there on their way
// out of and into the GPU. It is mapped into the device at the same address (unified
// addressing), so the delivery agent copies to and from it directly. The whole arena is allocated
// before the kernel starts and carved up while it runs: cudaHostAlloc blocks while a persistent
// kernel fills the GPU (measured on an H200 with 132 ranks of 1024 threads: the proxy never
// returned from it), and cudaFreeHost synchronises the device. Buffers come in power-of-two sizes
// and are reused; when the arena is used up, take() says so and the caller waits for buffers to
// come back.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace dcuda::runtime {

class pinned_pool {
 public:
  static constexpr std::size_t smallest = 256;

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
    buffer(pinned_pool* pool, char* data, int size_class)
        : pool_(pool), data_(data), size_class_(size_class) {}
    pinned_pool* pool_ = nullptr;
    char* data_ = nullptr;
    int size_class_ = 0;
  };

  explicit pinned_pool(std::size_t arena_bytes);
  pinned_pool(const pinned_pool&) = delete;
  pinned_pool& operator=(const pinned_pool&) = delete;
  ~pinned_pool();

  // Whether take(bytes) would succeed now.
  bool can_take(std::size_t bytes) const;
  // A buffer of at least `bytes`, or nullopt while the arena is used up. Bytes beyond the arena
  // itself throw.
  std::optional<buffer> take(std::size_t bytes);

 private:
  static int size_class_of(std::size_t bytes);
  static std::size_t class_bytes(int size_class) { return smallest << size_class; }
  void give_back(char* data, int size_class);

  char* arena_ = nullptr;
  std::size_t arena_bytes_ = 0;
  std::size_t carved_ = 0;       // arena bytes handed out at least once
  std::size_t outstanding_ = 0;  // buffers not given back; at 0 the arena is carved afresh, so
                                 // that small buffers of the past never starve a large one
  std::vector<std::vector<char*>> free_;  // by size class
};

}  // namespace dcuda::runtime
