// Which blocking call a thread is in, for the watchdog. A CUDA call that does not return (the
// driver cannot queue more work while the kernel holds the GPU) would otherwise look like an idle
// proxy; the standstill report names the call and how long it has lasted instead.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace dcuda::runtime {

class call_in_progress {
 public:
  // Marks the calling thread as inside `name` (a string literal) until the scope ends.
  class scope {
   public:
    explicit scope(call_in_progress& owner, const char* name) : owner_(owner) {
      owner_.since_ns_.store(now_ns(), std::memory_order_relaxed);
      owner_.name_.store(name, std::memory_order_release);
    }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    ~scope() { owner_.name_.store(nullptr, std::memory_order_release); }

   private:
    call_in_progress& owner_;
  };

  [[nodiscard]] scope enter(const char* name) { return scope(*this, name); }

  // "inside <name> for <s> s" when a call has lasted at least `at_least_s`, else empty. Any
  // thread may ask.
  std::string describe(double at_least_s) const {
    const char* name = name_.load(std::memory_order_acquire);
    if (name == nullptr) return {};
    const double seconds =
        static_cast<double>(now_ns() - since_ns_.load(std::memory_order_relaxed)) * 1e-9;
    if (seconds < at_least_s) return {};
    return "inside " + std::string(name) + " for " + std::to_string(static_cast<int>(seconds)) +
           " s";
  }

 private:
  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  std::atomic<const char*> name_{nullptr};
  std::atomic<std::int64_t> since_ns_{0};
};

}  // namespace dcuda::runtime
