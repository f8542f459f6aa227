// A thread that calls `poll` until asked to stop, then once more until `poll` finds nothing, so
// that whatever the device sent before the kernel ended is still handled.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace dcuda::runtime {

class polling_thread {
 public:
  // poll: returns true when it found work. idle_pause: sleep when it found none (zero: spin,
  // for the lowest latency). start: runs first, on the thread (e.g. to select its CUDA device,
  // which is per thread).
  polling_thread(std::function<bool()> poll, std::chrono::microseconds idle_pause,
                 std::function<void()> start = {})
      : thread_(
            [poll = std::move(poll), idle_pause, start = std::move(start)](std::stop_token stop) {
              if (start) start();
              while (!stop.stop_requested()) {
                if (poll()) continue;
                if (idle_pause.count() > 0) {
                  std::this_thread::sleep_for(idle_pause);
                } else {
                  std::this_thread::yield();
                }
              }
              while (poll()) {
              }
            }) {}

  // Stops and joins (std::jthread does both on destruction).
  ~polling_thread() = default;

 private:
  std::jthread thread_;
};

}  // namespace dcuda::runtime
