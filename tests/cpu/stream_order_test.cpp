// The ordering of the stream-ordered operations (runtime/stream_operations.h), with host threads
// standing in for streams. Each simulated stream runs its queued work one item after another, as
// a CUDA stream does: a count adds 1 to a counter (the counting kernel's reduction), a wait spins
// until its counter has reached its threshold in 32-bit wraparound (cuStreamWaitValue32 with
// "greater or equal"), and the thresholds are taken from wait_thresholds when the wait is queued,
// as dcuda_wait_notifications_on_stream takes them. What the GPU does is stood in for; the
// thresholds and the comparison are the runtime's own.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/portability.h"
#include "runtime/stream_operations.h"
#include "test_main.h"

namespace {

using std::chrono::milliseconds;

// The counters of one rank's tags, as the GPU holds them.
struct counters {
  std::array<std::atomic<std::uint32_t>, 4> words{};
  void count(int tag) { words[static_cast<std::size_t>(tag)].fetch_add(1); }
  bool reached(int tag, std::uint32_t threshold) const {
    return dcuda::protocol::reached(words[static_cast<std::size_t>(tag)].load(), threshold);
  }
};

// The order in which the streams' marks were passed.
struct completion_log {
  std::mutex lock;
  std::vector<std::string> marks;
  void pass(const std::string& mark) {
    std::lock_guard<std::mutex> guard(lock);
    marks.push_back(mark);
  }
  // Where `mark` stands among the marks passed so far; their count if it has not been passed.
  std::size_t position(const std::string& mark) {
    std::lock_guard<std::mutex> guard(lock);
    std::size_t i = 0;
    while (i < marks.size() && marks[i] != mark) ++i;
    return i;
  }
  bool passed(const std::string& mark) {
    std::lock_guard<std::mutex> guard(lock);
    for (const std::string& passed_mark : marks) {
      if (passed_mark == mark) return true;
    }
    return false;
  }
};

// A stream: work queued before start() runs in order on a thread of its own; a wait gives up
// after 5 s (the test then fails on what did not happen) instead of hanging.
class simulated_stream {
 public:
  void queue(std::function<void()> work) { work_.push_back(std::move(work)); }
  void queue_count(counters& on, int tag) {
    queue([&on, tag] { on.count(tag); });
  }
  // Takes its threshold now, in queueing order, as the runtime does at the call.
  void queue_wait(dcuda::runtime::wait_thresholds& thresholds, const counters& on, int tag,
                  int count) {
    const std::uint32_t threshold = thresholds.consume(0, tag, count);
    queue([this, &on, tag, threshold] {
      if (!spin_until([&] { return on.reached(tag, threshold); })) timed_out_ = true;
    });
  }
  void queue_mark(completion_log& log, std::string mark) {
    queue([&log, mark] { log.pass(mark); });
  }
  void start() {
    thread_ = std::thread([this] {
      for (const auto& work : work_) work();
    });
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  ~simulated_stream() { join(); }

  // Whether one of its waits gave up (its threshold was never reached): what it ran after that
  // wait did not wait for anything.
  bool timed_out() const { return timed_out_; }

  // Whether `done` came true within 5 s.
  template <typename Done>
  static bool spin_until(Done&& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }

 private:
  std::vector<std::function<void()>> work_;
  std::thread thread_;
  std::atomic<bool> timed_out_{false};
};

}  // namespace

DCUDA_TEST(a_ready_wait_completes_while_an_earlier_issued_one_is_still_held) {
  counters rank;
  completion_log log;
  dcuda::runtime::wait_thresholds thresholds(1);
  std::atomic<bool> gate{false};
  simulated_stream slow_sender;
  simulated_stream fast_sender;
  simulated_stream first_waiter;
  simulated_stream second_waiter;
  // Issued first: a wait for tag 1, which a sender held behind a long kernel (the gate) counts.
  first_waiter.queue_wait(thresholds, rank, 1, 1);
  first_waiter.queue_mark(log, "tag 1 received");
  slow_sender.queue(
      [&] { static_cast<void>(simulated_stream::spin_until([&] { return gate.load(); })); });
  slow_sender.queue_count(rank, 1);
  // Issued second: a wait for tag 2, counted by a stream that is free.
  second_waiter.queue_wait(thresholds, rank, 2, 1);
  second_waiter.queue_mark(log, "tag 2 received");
  fast_sender.queue_count(rank, 2);
  for (simulated_stream* s : {&first_waiter, &slow_sender, &second_waiter, &fast_sender}) {
    s->start();
  }
  second_waiter.join();
  std::this_thread::sleep_for(milliseconds(20));
  DCUDA_CHECK(log.passed("tag 2 received"));
  DCUDA_CHECK(!log.passed("tag 1 received"));  // held until the gate opens
  gate = true;
  first_waiter.join();
  DCUDA_CHECK(!first_waiter.timed_out() && !second_waiter.timed_out());
  DCUDA_CHECK_EQ(log.position("tag 2 received"), std::size_t{0});
  DCUDA_CHECK_EQ(log.position("tag 1 received"), std::size_t{1});
}

DCUDA_TEST(waits_on_one_tag_across_streams_take_their_counts_in_call_order) {
  counters rank;
  completion_log log;
  dcuda::runtime::wait_thresholds thresholds(1);
  simulated_stream first_waiter;
  simulated_stream second_waiter;
  first_waiter.queue_wait(thresholds, rank, 3, 60);
  first_waiter.queue_mark(log, "first");
  second_waiter.queue_wait(thresholds, rank, 3, 40);
  second_waiter.queue_mark(log, "second");
  first_waiter.start();
  second_waiter.start();
  // 99 notifications from three senders at once: enough for the first wait, one short of both.
  std::array<simulated_stream, 3> senders;
  for (int i = 0; i < 99; ++i) senders[static_cast<std::size_t>(i % 3)].queue_count(rank, 3);
  // Notifications of another tag count for neither.
  senders[0].queue_count(rank, 2);
  for (simulated_stream& sender : senders) sender.start();
  for (simulated_stream& sender : senders) sender.join();
  first_waiter.join();
  std::this_thread::sleep_for(milliseconds(20));
  DCUDA_CHECK(log.passed("first"));
  DCUDA_CHECK(!log.passed("second"));
  simulated_stream last_sender;
  last_sender.queue_count(rank, 3);
  last_sender.start();
  second_waiter.join();
  DCUDA_CHECK(!first_waiter.timed_out() && !second_waiter.timed_out());
  DCUDA_CHECK(log.passed("second"));
  DCUDA_CHECK_EQ(rank.words[3].load(), 100u);
}

DCUDA_TEST(stream_waits_hold_and_release_across_the_counters_wrap) {
  counters rank;
  completion_log log;
  dcuda::runtime::wait_thresholds thresholds(1);
  // A context that has counted 2^32 - 2 notifications of tag 0 and waited for all of them.
  thresholds.consume(0, 0, 0x7fffffff);
  thresholds.consume(0, 0, 0x7fffffff);
  rank.words[0] = 0xfffffffeu;
  simulated_stream waiter;
  waiter.queue_wait(thresholds, rank, 0, 5);  // threshold 3, past the wrap
  waiter.queue_mark(log, "five more");
  waiter.start();
  simulated_stream sender;
  for (int i = 0; i < 4; ++i) sender.queue_count(rank, 0);
  sender.start();
  sender.join();
  std::this_thread::sleep_for(milliseconds(20));
  DCUDA_CHECK_EQ(rank.words[0].load(), 2u);  // wrapped, one short
  DCUDA_CHECK(!log.passed("five more"));
  simulated_stream last;
  last.queue_count(rank, 0);
  last.start();
  waiter.join();
  DCUDA_CHECK(!waiter.timed_out());
  DCUDA_CHECK(log.passed("five more"));
}
