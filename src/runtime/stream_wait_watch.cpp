#include "runtime/stream_wait_watch.h"

#include <sstream>

#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

constexpr auto check_interval = std::chrono::milliseconds(20);

cudaEvent_t new_event() {
  cudaEvent_t event = nullptr;
  DCUDA_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

}  // namespace

stream_wait_watch::stream_wait_watch(double timeout_s, int device)
    : timeout_s_(timeout_s), device_(device) {
  if (timeout_s_ <= 0) return;
  reads_.emplace();
  read_value_.emplace(1);
  thread_ = std::thread([this] { watch(); });
}

stream_wait_watch::~stream_wait_watch() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    stop_signal_.notify_all();
    thread_.join();
  }
  for (const watched& entry : waits_) {
    cudaEventDestroy(entry.reached);
    cudaEventDestroy(entry.passed);
  }
}

void stream_wait_watch::begin_wait(cudaStream_t stream, const wait& what) {
  if (timeout_s_ <= 0) return;
  watched entry{what, new_event(), nullptr, std::nullopt};
  DCUDA_CUDA_CHECK(cudaEventRecord(entry.reached, stream));
  beginning_ = entry;
}

void stream_wait_watch::finish_wait(cudaStream_t stream) {
  if (timeout_s_ <= 0 || !beginning_) return;
  watched entry = *beginning_;
  beginning_.reset();
  entry.passed = new_event();
  DCUDA_CUDA_CHECK(cudaEventRecord(entry.passed, stream));
  std::lock_guard<std::mutex> lock(mutex_);
  waits_.push_back(entry);
}

void stream_wait_watch::watch() {
  // Events are queried on the GPU they belong to.
  if (cudaSetDevice(device_) != cudaSuccess) return;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_signal_.wait_for(lock, check_interval, [this] { return stopping_; })) {
    const auto now = std::chrono::steady_clock::now();
    for (auto entry = waits_.begin(); entry != waits_.end();) {
      if (cudaEventQuery(entry->passed) == cudaSuccess) {
        cudaEventDestroy(entry->reached);
        cudaEventDestroy(entry->passed);
        entry = waits_.erase(entry);
        continue;
      }
      if (!entry->reached_at && cudaEventQuery(entry->reached) == cudaSuccess) {
        entry->reached_at = now;
      }
      if (entry->reached_at) {
        const double waited_s = std::chrono::duration<double>(now - *entry->reached_at).count();
        if (waited_s > timeout_s_) report(*entry, waited_s);
      }
      ++entry;
    }
    cudaGetLastError();  // a query's cudaErrorNotReady is no error
  }
}

void stream_wait_watch::report(const watched& stuck, double waited_s) {
  // A copy on a stream of its own: the stream of the wait, and any stream that synchronises with
  // the legacy default stream, may be held by it. Even a stream of its own may share the GPU's
  // hardware queue with the held stream, behind the wait: the report does not wait for the copy
  // more than a second.
  bool read = cudaMemcpyAsync(read_value_->host(), stuck.what.counter, sizeof(std::uint32_t),
                              cudaMemcpyDefault, reads_->get()) == cudaSuccess;
  const auto asked = std::chrono::steady_clock::now();
  while (read && cudaStreamQuery(reads_->get()) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() - asked > std::chrono::seconds(1)) read = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::ostringstream text;
  text.precision(3);
  text << stuck.what.call << ": a stream has waited " << waited_s << " s (DCUDA_WAIT_TIMEOUT) for "
       << stuck.what.waiting_for << ": its counter must reach " << stuck.what.needed << ", ";
  if (read) {
    text << "it stands at " << *read_value_->host();
  } else {
    text << "and where it stands could not be read";
  }
  text << "; " << stuck.what.missing
       << " (or the operation that would count it is queued on this GPU behind the wait, in a "
          "stream that shares its hardware queue: CUDA_DEVICE_MAX_CONNECTIONS, docs/api.md)";
  report_and_exit(stuck.what.call, DCUDA_ERROR_TIMEOUT, text.str());
}

}  // namespace dcuda::runtime
