// A thread that calls `poll` until asked to stop, then once more until `poll` finds nothing, so
// that whatever the device sent before the kernel ended is still handled.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace dcuda::runtime {

// Tells the core that this thread spins (a pause on x86: the sibling hyperthread runs faster).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class polling_thread {
 public:
  // Idle polls between two yields of a spinning thread: a millisecond or so of quiet.
  static constexpr std::uint32_t spins_before_yield = 4096;

  // poll: returns true when it found work. idle_pause: sleep when it found none (zero: spin,
  // for the lowest latency). start: runs first, on the thread (e.g. to select its CUDA device,
  // which is per thread).
  polling_thread(std::function<bool()> poll, std::chrono::microseconds idle_pause,
                 std::function<void()> start = {})
      : thread_(
            [poll = std::move(poll), idle_pause, start = std::move(start)](std::stop_token stop) {
              if (start) start();
              std::uint32_t idle_polls = 0;
              while (!stop.stop_requested()) {
                if (poll()) {
                  idle_polls = 0;
                  continue;
                }
                if (idle_pause.count() > 0) {
                  std::this_thread::sleep_for(idle_pause);
                } else if (++idle_polls % spins_before_yield == 0) {
                  // A spinning proxy gives the core away only after a long quiet spell: a
                  // sched_yield costs about a microsecond, which an operation arriving meanwhile
                  // would wait for (the host proxy's latency path, docs/performance.md).
                  std::this_thread::yield();
                } else {
                  cpu_relax();
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
