// Reading a fuzzer's input as typed fields: each take<T>() consumes sizeof(T) bytes (zeros once
// the input is used up), so that every input, however short, is a valid sequence of fields.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

namespace dcuda_fuzz {

class input {
 public:
  input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  template <typename T>
  T take() {
    T value{};
    const std::size_t n = std::min(sizeof value, remaining());
    if (n > 0) std::memcpy(&value, data_ + at_, n);
    at_ += n;
    return value;
  }

  // Up to `most` bytes (fewer when the input ends first).
  std::span<const std::byte> bytes(std::size_t most) {
    const std::size_t n = std::min(most, remaining());
    const auto* first = reinterpret_cast<const std::byte*>(data_ + at_);
    at_ += n;
    return {first, n};
  }

  // The bytes up to the next NUL (or the end), without it.
  std::string text() {
    const auto* begin = reinterpret_cast<const char*>(data_ + at_);
    std::size_t n = 0;
    while (n < remaining() && begin[n] != '\0') ++n;
    at_ += std::min(n + 1, remaining());
    return {begin, n};
  }

  std::size_t remaining() const { return size_ - at_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// A property of the code under test does not hold: a crash for libFuzzer, with what was seen.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "fuzz target: property violated: %s\n", what);
  std::abort();
}

}  // namespace dcuda_fuzz
