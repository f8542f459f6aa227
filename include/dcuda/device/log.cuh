// dcuda_log (thesis listing 3.2): a stream whose lines the host prints, prefixed with the rank,
// while the kernel runs. A line is built in the thread's own buffer and sent on `log.flush` as
// consecutive entries of the log channel, so lines of different ranks never mix.
//
// dcuda_log_get(gst) is the rank's stream: the thesis calls it from every thread of the rank
// (listing 3.2, `if (rank == 0) { ... log << ... }`) and expects one line, so only thread 0
// writes; the other threads' use of it does nothing. dcuda_log_get_thread(gst) (extension) gives
// every thread a stream of its own, and its lines name the thread as well.
#pragma once

#include "dcuda/detail/device/log_channel.cuh"
#include "dcuda/detail/protocol/limits.h"
#include "dcuda/detail/protocol/text_format.h"

class dcuda_log;

// Any thread: the rank's stream. Only thread 0's lines are sent (the thesis calls it from every
// thread and expects one line); the other threads' use of it does nothing.
__device__ inline dcuda_log dcuda_log_get(dcuda_state& gst);

// Extension. Any thread: a stream of the calling thread's own; its lines name the thread.
__device__ inline dcuda_log dcuda_log_get_thread(dcuda_state& gst);

// A line is built with `<<` (text, characters, booleans, integers, floating point, pointers) and
// sent by `<< log.flush`; a line longer than protocol::max_log_line ends in "...".
struct dcuda_log_flush {};

class dcuda_log {
 public:
  __device__ dcuda_log(dcuda_state& gst, bool every_thread)
      : gst_(&gst),
        thread_(every_thread ? static_cast<std::int32_t>(threadIdx.x) : -1),
        enabled_(every_thread || threadIdx.x == 0),
        length_(0),
        truncated_(false) {}

  // `log << ... << log.flush` ends and sends a line, as in the thesis.
  dcuda_log_flush flush;

  __device__ dcuda_log& operator<<(const char* text) {
    return append([&](auto& out) { dcuda::protocol::append_text(out, text); });
  }
  __device__ dcuda_log& operator<<(char c) {
    return append([&](auto& out) {
      if (c != '\0') out.put(c);
    });
  }
  __device__ dcuda_log& operator<<(bool value) { return *this << (value ? "true" : "false"); }
  __device__ dcuda_log& operator<<(int value) { return signed_value(value); }
  __device__ dcuda_log& operator<<(long value) { return signed_value(value); }
  __device__ dcuda_log& operator<<(long long value) { return signed_value(value); }
  __device__ dcuda_log& operator<<(unsigned value) { return unsigned_value(value); }
  __device__ dcuda_log& operator<<(unsigned long value) { return unsigned_value(value); }
  __device__ dcuda_log& operator<<(unsigned long long value) { return unsigned_value(value); }
  __device__ dcuda_log& operator<<(float value) { return *this << static_cast<double>(value); }
  __device__ dcuda_log& operator<<(double value) {
    return append([&](auto& out) { dcuda::protocol::append_double(out, value); });
  }
  __device__ dcuda_log& operator<<(const void* pointer) {
    return append([&](auto& out) {
      dcuda::protocol::append_text(out, "0x");
      dcuda::protocol::append_unsigned(out, reinterpret_cast<std::uint64_t>(pointer), 16);
    });
  }
  __device__ dcuda_log& operator<<(dcuda_log_flush) {
    if (enabled_) send_line();
    length_ = 0;
    truncated_ = false;
    return *this;
  }

 private:
  template <typename Write>
  __device__ dcuda_log& append(Write&& write) {
    if (!enabled_) return *this;
    dcuda::protocol::text_buffer out{text_, dcuda::protocol::max_log_line, length_, truncated_};
    write(out);
    length_ = out.length;
    truncated_ = out.truncated;
    return *this;
  }
  __device__ dcuda_log& signed_value(long long value) {
    return append([&](auto& out) { dcuda::protocol::append_signed(out, value); });
  }
  __device__ dcuda_log& unsigned_value(unsigned long long value) {
    return append([&](auto& out) { dcuda::protocol::append_unsigned(out, value); });
  }

  __device__ void send_line() {
    if (truncated_ && length_ >= 3) {
      text_[length_ - 3] = text_[length_ - 2] = text_[length_ - 1] = '.';
    }
    dcuda::device::send_log_line(*gst_, text_, length_, thread_);
  }

  dcuda_state* gst_;
  std::int32_t thread_;  // -1: the rank's stream
  bool enabled_;
  int length_;
  bool truncated_;
  char text_[dcuda::protocol::max_log_line];
};

__device__ inline dcuda_log dcuda_log_get(dcuda_state& gst) {
  return dcuda_log(gst, false);
}

__device__ inline dcuda_log dcuda_log_get_thread(dcuda_state& gst) {
  return dcuda_log(gst, true);
}
