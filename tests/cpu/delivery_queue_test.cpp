// The delivery agent's queue (protocol/delivery_queue.h): the host proxy's real producer
// (runtime::delivery_jobs) against a host thread that consumes as the agent block does, with the
// same protocol functions. Copies go between host buffers; counts go to plain counters.
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "dcuda/detail/protocol/delivery_queue.h"
#include "runtime/delivery_jobs.h"
#include "runtime/error.h"
#include "test_main.h"

namespace {

using namespace dcuda::protocol;
using dcuda::runtime::delivery_jobs;

// Runs jobs as device/delivery_agent.cuh does: take the job once all its words carry its ticket,
// copy, count, finish.
class host_agent {
 public:
  explicit host_agent(delivery_queue& queue) : queue_(queue) {}
  ~host_agent() { stop(); }
  void start() {
    thread_ = std::thread([this] {
      for (std::uint32_t next = 0;; ++next) {
        delivery_job job{};
        while (!delivery_take_job(queue_, next, job)) {
          if (stopping_) return;
          std::this_thread::yield();
        }
        while (paused_) std::this_thread::yield();
        auto* destination = reinterpret_cast<unsigned char*>(job.destination);
        // An empty job may name NULL (an empty vector's data()), which memcpy must not get.
        const bool copies = job.bytes > 0;
        if (copies && job.kind == delivery_job_kind::copy) {
          std::memcpy(destination, reinterpret_cast<const void*>(job.source), job.bytes);
        } else if (copies && job.kind == delivery_job_kind::copy_inline) {
          std::memcpy(destination, &job.source, job.bytes);
        }
        const job_count count = decode_job_count(job.counter);
        if (count.counter != nullptr) {
          system_atomic<std::uint32_t>(*count.counter).fetch_add(1u, cuda::memory_order_release);
        }
        delivery_finish(queue_, next);
      }
    });
  }
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::atomic<bool> paused_{false};

 private:
  delivery_queue& queue_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

void wait_until(const std::function<bool()>& condition) {
  while (!condition()) std::this_thread::yield();
}

}  // namespace

DCUDA_TEST(agent_runs_copies_and_counts_in_submission_order_across_laps) {
  auto queue = std::make_unique<delivery_queue>();
  delivery_jobs jobs(queue.get());
  // Three laps of the ring; sizes around the inline limit; each job's data depends on its number.
  constexpr int total = 3 * static_cast<int>(delivery_queue_slots) + 17;
  std::vector<std::vector<unsigned char>> sources(total), destinations(total);
  std::vector<std::uint32_t> counter_seen(total);  // the count visible once the job finished
  std::vector<std::uint32_t> numbers;
  // The buffers and the counter are ready before the agent starts: a job hands them over without
  // a fence (its words are stamped, protocol/delivery_queue.h), as the device's are, where the
  // proxy never writes them itself; here the test does.
  std::uint32_t counter = 0;
  for (int i = 0; i < total; ++i) {
    const std::size_t bytes = static_cast<std::size_t>(i % 53);  // 0..52: inline and not
    sources[static_cast<std::size_t>(i)].resize(bytes);
    for (std::size_t b = 0; b < bytes; ++b) {
      sources[static_cast<std::size_t>(i)][b] = static_cast<unsigned char>(i * 31 + b);
    }
    destinations[static_cast<std::size_t>(i)].assign(bytes, 0);
  }
  host_agent agent(*queue);
  agent.start();
  for (int i = 0; i < total; ++i) {
    const std::size_t bytes = static_cast<std::size_t>(i % 53);
    wait_until([&] { return jobs.has_room(); });
    const std::uint32_t number =
        i % 7 == 6
            ? jobs.count({&counter, i % 3 == 0})
            : jobs.copy_from_host(destinations[static_cast<std::size_t>(i)].data(),
                                  sources[static_cast<std::size_t>(i)].data(), bytes,
                                  i % 2 == 0 ? job_count{&counter, i % 4 == 0} : job_count{});
    numbers.push_back(number);
    if (bytes <= delivery_inline_bytes) {
      // Inline: the source may change at once without changing what lands.
      std::fill(sources[static_cast<std::size_t>(i)].begin(),
                sources[static_cast<std::size_t>(i)].end(), 0xEE);
    }
  }
  wait_until([&] { return jobs.all_finished(); });
  agent.stop();
  std::uint32_t expected_count = 0;
  for (int i = 0; i < total; ++i) {
    DCUDA_CHECK_EQ(numbers[static_cast<std::size_t>(i)], static_cast<std::uint32_t>(i));
    DCUDA_CHECK(jobs.finished(static_cast<std::uint32_t>(i)));
    if (i % 7 == 6 || i % 2 == 0) ++expected_count;
    if (i % 7 == 6) continue;
    const std::size_t bytes = static_cast<std::size_t>(i % 53);
    for (std::size_t b = 0; b < bytes; ++b) {
      DCUDA_CHECK_EQ(static_cast<int>(destinations[static_cast<std::size_t>(i)][b]),
                     static_cast<int>(static_cast<unsigned char>(i * 31 + b)));
    }
  }
  DCUDA_CHECK_EQ(counter, expected_count);
  DCUDA_CHECK_EQ(jobs.issued(), static_cast<std::uint32_t>(total));
}

DCUDA_TEST(delivery_queue_full_refuses_more_until_the_agent_finishes) {
  auto queue = std::make_unique<delivery_queue>();
  delivery_jobs jobs(queue.get());
  std::uint32_t counter = 0;
  for (std::uint32_t i = 0; i < delivery_queue_slots; ++i) jobs.count({&counter});
  DCUDA_CHECK(!jobs.has_room());
  DCUDA_CHECK(!jobs.finished(0));
  bool refused = false;
  try {
    jobs.count({&counter});
  } catch (const dcuda::runtime::error&) {
    refused = true;  // never overwrites a job the agent has not run
  }
  DCUDA_CHECK(refused);
  host_agent agent(*queue);
  agent.start();
  wait_until([&] { return jobs.all_finished(); });
  DCUDA_CHECK(jobs.has_room(delivery_queue_slots));
  DCUDA_CHECK_EQ(counter, delivery_queue_slots);
}

DCUDA_TEST(delivery_job_finished_follows_done_across_wraparound) {
  DCUDA_CHECK(delivery_job_finished(5, 6));
  DCUDA_CHECK(!delivery_job_finished(6, 6));
  DCUDA_CHECK(delivery_job_finished(0xFFFFFFFFu, 0));  // done wrapped past the job
  DCUDA_CHECK(!delivery_job_finished(0, 0xFFFFFFFFu));
  DCUDA_CHECK(delivery_has_room(10, 10, delivery_queue_slots));
  DCUDA_CHECK(!delivery_has_room(10, 9, delivery_queue_slots));
  DCUDA_CHECK(delivery_has_room(3, 0xFFFFFFF0u, 1));  // issued wrapped, 19 outstanding
}

// A job's count keeps its counter and its scope through the job's word, and no count stays none.
DCUDA_TEST(a_jobs_count_carries_its_counter_and_scope) {
  std::uint32_t counters[2] = {};
  for (const bool system_scope : {false, true}) {
    for (std::uint32_t* counter : {&counters[0], &counters[1]}) {
      const std::uint64_t field = encode_job_count({counter, system_scope});
      const job_count back = decode_job_count(field);
      DCUDA_CHECK(back.counter == counter);
      DCUDA_CHECK_EQ(back.system_scope, system_scope);
    }
  }
  DCUDA_CHECK_EQ(encode_job_count({}), std::uint64_t{0});
  DCUDA_CHECK_EQ(encode_job_count({nullptr, true}), std::uint64_t{0});
  DCUDA_CHECK(decode_job_count(0).counter == nullptr);
  DCUDA_CHECK(!decode_job_count(0).system_scope);
}

DCUDA_TEST(delivery_jobs_without_an_agent_are_an_error) {
  delivery_jobs jobs(nullptr);
  std::uint32_t counter = 0;
  bool refused = false;
  try {
    jobs.count({&counter});
  } catch (const dcuda::runtime::error& e) {
    refused = std::strstr(e.what(), "no delivery agent") != nullptr;
  }
  DCUDA_CHECK(refused);
  DCUDA_CHECK(jobs.all_finished());
}

DCUDA_TEST(agent_takes_a_job_only_when_every_word_carries_its_ticket) {
  auto queue = std::make_unique<delivery_queue>();
  delivery_jobs jobs(queue.get());
  std::uint32_t counter = 0;
  unsigned char destination[8] = {};
  const unsigned char payload[5] = {1, 2, 3, 4, 5};
  const std::uint32_t number =
      jobs.copy_from_host(destination, payload, sizeof payload, {&counter});
  delivery_job job{};
  DCUDA_CHECK(delivery_take_job(*queue, number, job));
  DCUDA_CHECK(job.kind == delivery_job_kind::copy_inline);
  DCUDA_CHECK_EQ(job.bytes, 5u);
  DCUDA_CHECK_EQ(job.destination, reinterpret_cast<std::uint64_t>(destination));
  DCUDA_CHECK_EQ(job.counter, reinterpret_cast<std::uint64_t>(&counter));
  DCUDA_CHECK_EQ(std::memcmp(&job.source, payload, sizeof payload), 0);
  // One word still from the slot's previous lap (or half written): the job is not there yet.
  for (std::uint32_t word = 0; word < delivery_job_words; ++word) {
    std::uint64_t& stored = queue->jobs[delivery_slot(number)].words[word];
    const std::uint64_t kept = stored;
    stored = stamped_word(static_cast<std::uint32_t>(kept),
                          delivery_ticket(number) - delivery_queue_slots);
    DCUDA_CHECK(!delivery_take_job(*queue, number, job));
    stored = kept;
  }
  DCUDA_CHECK(delivery_take_job(*queue, number, job));
  DCUDA_CHECK(!delivery_take_job(*queue, number + 1, job));  // nothing submitted there
}
