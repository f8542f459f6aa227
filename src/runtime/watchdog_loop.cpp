#include "runtime/watchdog_loop.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "runtime/error_text.h"
#include "runtime/signal_watch.h"

namespace dcuda::runtime {

run_outcome watch_until_finished(cudaEvent_t started, cudaEvent_t finished, watchdog& dog,
                                 const device_buffers& buffers, const char* call) {
  run_outcome outcome;
  std::optional<watchdog::clock::time_point> gave_up_at;
  bool kernel_started = false;
  while ((outcome.kernel_status = cudaEventQuery(finished)) == cudaErrorNotReady) {
    const auto now = watchdog::clock::now();
    if (!kernel_started) kernel_started = cudaEventQuery(started) == cudaSuccess;
    if (!gave_up_at) outcome.signal = received_signal();
    if (!gave_up_at && outcome.signal) {
      buffers.request_abort();
      gave_up_at = now;
    } else if (!gave_up_at && kernel_started) {
      watchdog::verdict verdict = dog.check(now);
      if (verdict.what == watchdog::verdict::warning) {
        std::fprintf(stderr, "dcuda: warning: %s", named_by_call(verdict.report, call).c_str());
        std::fflush(stderr);
      } else if (verdict.what == watchdog::verdict::standstill) {
        outcome.hang_report = std::move(verdict.report);
        buffers.request_abort();
        gave_up_at = now;
      }
    } else if (gave_up_at && now - *gave_up_at > std::chrono::seconds(5)) {
      break;  // some rank is not in a dcuda wait and never reads the abort flag
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // A signal that came as the kernel ended still ends the run with its error.
  if (!outcome.signal && !outcome.hang_report) outcome.signal = received_signal();
  return outcome;
}

}  // namespace dcuda::runtime
