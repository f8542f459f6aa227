// The watchdog of the stream-ordered waits (dcuda_wait_notifications_on_stream,
// dcuda_barrier_on_stream): a stream held by a wait that never completes would otherwise hang the
// program without a word.
// Each wait is bracketed by two events; a thread of the context checks them, and a wait whose
// stream reached it longer than the timeout ago is reported as an error with what it waits for
// and what has arrived.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cuda_memory.h"

namespace dcuda::runtime {

class stream_wait_watch {
 public:
  // What one wait waits for, for its report.
  struct wait {
    const char* call = "";                   // the API call that queued it
    std::string waiting_for;                 // "3 notification(s) of tag 7 at rank 2"
    std::string missing;                     // what has not come: "a put_notify or notify ..."
    std::uint32_t needed = 0;                // the counter value the stream waits for
    const std::uint32_t* counter = nullptr;  // this GPU's memory, or mapped host memory
  };

  // `timeout_s` 0: no watch (the waits are not recorded). `device`: the GPU of the waits.
  stream_wait_watch(double timeout_s, int device);
  ~stream_wait_watch();
  stream_wait_watch(const stream_wait_watch&) = delete;
  stream_wait_watch& operator=(const stream_wait_watch&) = delete;

  // Records a wait about to be queued on `stream`: the event before it now, the one after it
  // by finish_wait once the wait is queued.
  void begin_wait(cudaStream_t stream, const wait& what);
  void finish_wait(cudaStream_t stream);

 private:
  struct watched {
    wait what;
    cudaEvent_t reached = nullptr;  // the stream got to the wait
    cudaEvent_t passed = nullptr;   // the stream got past it
    std::optional<std::chrono::steady_clock::time_point> reached_at;
  };
  void watch();
  [[noreturn]] void report(const watched& stuck, double waited_s);

  double timeout_s_;
  int device_;
  std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;
  std::vector<watched> waits_;
  std::optional<watched> beginning_;  // between begin_wait and finish_wait
  std::optional<cuda_stream> reads_;  // reads a counter for the report
  // Where it lands: pinned, so that the copy is queued without waiting for it (a copy into
  // pageable memory returns only once done, and the GPU may never get to it).
  std::optional<mapped_array<std::uint32_t>> read_value_;
  std::thread thread_;
};

}  // namespace dcuda::runtime
