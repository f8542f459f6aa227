// Host runtime pieces that need no GPU: settings, CPU timers, the watchdog, error messages, the
// layout stamp a kernel compares at dcuda_gpu_init.
#include <chrono>
#include <limits>
#include <string>
#include <utility>

#include "dcuda/detail/protocol/heap_layout.h"
#include "dcuda/detail/protocol/device_context.h"
#include "runtime/cpu_timers.h"
#include "runtime/error.h"
#include "runtime/error_text.h"
#include "runtime/settings.h"
#include "runtime/watchdog.h"
#include "error_text.h"
#include "test_main.h"

using namespace dcuda;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

DCUDA_TEST(settings_come_from_environment_and_arguments_win) {
  const auto s = runtime::read_settings({"--dcuda-ranks-per-device=12", "other"},
                                        {{"DCUDA_RANKS_PER_DEVICE", "40"},
                                         {"DCUDA_WAIT_TIMEOUT", "2.5"},
                                         {"DCUDA_DEVICE", "1"},
                                         {"DCUDA_FORCE_NETWORK", "1"},
                                         {"DCUDA_VERBOSE", "on"}});
  DCUDA_CHECK(s.max_ranks_per_device.has_value());
  DCUDA_CHECK_EQ(*s.max_ranks_per_device, 12);
  DCUDA_CHECK_EQ(s.wait_timeout_s, 2.5);
  DCUDA_CHECK(s.device.has_value());
  DCUDA_CHECK_EQ(*s.device, 1);
  DCUDA_CHECK(s.force_network);
  DCUDA_CHECK(s.verbose);
  DCUDA_CHECK(!runtime::read_settings({"--dcuda-force-network=0"}, {{"DCUDA_FORCE_NETWORK", "1"}})
                   .force_network);
  const auto defaults = runtime::read_settings({}, {});
  DCUDA_CHECK(!defaults.max_ranks_per_device.has_value());
  DCUDA_CHECK(!defaults.device.has_value());
  DCUDA_CHECK(!defaults.force_network);
  DCUDA_CHECK(!defaults.verbose);
  DCUDA_CHECK(!defaults.host_world_barrier);
  DCUDA_CHECK(!defaults.allow_shared_gpus);
  DCUDA_CHECK(runtime::read_settings({}, {{"DCUDA_ALLOW_SHARED_GPUS", "1"}}).allow_shared_gpus);
  DCUDA_CHECK(
      !runtime::read_settings({"--dcuda-allow-shared-gpus=0"}, {{"DCUDA_ALLOW_SHARED_GPUS", "1"}})
           .allow_shared_gpus);
  DCUDA_CHECK_EQ(defaults.wait_timeout_s, 10.0);
  DCUDA_CHECK(runtime::read_settings({}, {{"DCUDA_HOST_WORLD_BARRIER", "yes"}}).host_world_barrier);
  DCUDA_CHECK(!runtime::read_settings({"--dcuda-host-world-barrier=off"},
                                      {{"DCUDA_HOST_WORLD_BARRIER", "1"}})
                   .host_world_barrier);
  DCUDA_CHECK_EQ(defaults.network_chunk_bytes, std::size_t{1} << 20);
  DCUDA_CHECK_EQ(
      runtime::read_settings({"--dcuda-network-chunk=262144"}, {{"DCUDA_NETWORK_CHUNK", "2097152"}})
          .network_chunk_bytes,
      std::size_t{256} << 10);
  DCUDA_CHECK(!defaults.network_chunk_by_model);
  const auto by_model = runtime::read_settings({}, {{"DCUDA_NETWORK_CHUNK", "model"}});
  DCUDA_CHECK(by_model.network_chunk_by_model);
  DCUDA_CHECK_EQ(by_model.network_chunk_bytes, std::size_t{1} << 20);  // until the model chooses
  DCUDA_CHECK(
      !runtime::read_settings({"--dcuda-network-chunk=65536"}, {{"DCUDA_NETWORK_CHUNK", "model"}})
           .network_chunk_by_model);
  dcuda_error_code code{};
  DCUDA_CHECK(
      contains(dcuda_test::error_of([] { runtime::network_chunk_from_model({}); }, &code),
               "DCUDA_NETWORK_CHUNK (--dcuda-network-chunk) is 'model', but the model has "
               "no single-message and pipelined fit of the network path's device initiator"));
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_SETTING);
  DCUDA_CHECK_EQ(defaults.stream_copy_engine_from, std::numeric_limits<std::size_t>::max());
  DCUDA_CHECK_EQ(runtime::read_settings({}, {{"DCUDA_STREAM_COPY_ENGINE_FROM", "8589934592"}})
                     .stream_copy_engine_from,
                 std::size_t{8} << 30);
  DCUDA_CHECK_EQ(runtime::read_settings({"--dcuda-stream-copy-engine-from=0"},
                                        {{"DCUDA_STREAM_COPY_ENGINE_FROM", "65536"}})
                     .stream_copy_engine_from,
                 std::size_t{0});
  DCUDA_CHECK_EQ(runtime::read_settings({}, {{"DCUDA_STREAM_COPY_ENGINE_FROM", "65536"}})
                     .stream_copy_engine_from,
                 std::size_t{65536});
  DCUDA_CHECK_EQ(defaults.heap_bytes, std::size_t{1} << 20);
  DCUDA_CHECK_EQ(runtime::read_settings({}, {{"DCUDA_HEAP_BYTES", "0"}}).heap_bytes,
                 std::size_t{0});
  DCUDA_CHECK_EQ(runtime::read_settings({}, {{"DCUDA_HEAP_BYTES", "256"}}).heap_bytes,
                 std::size_t{256});
  DCUDA_CHECK_EQ(
      runtime::read_settings({"--dcuda-heap-bytes=1073741824"}, {{"DCUDA_HEAP_BYTES", "65536"}})
          .heap_bytes,
      std::size_t{1} << 30);
}

DCUDA_TEST(bad_setting_names_the_setting_and_value) {
  for (const auto& [name, value] :
       {std::pair<std::string, std::string>{"DCUDA_RANKS_PER_DEVICE", "0"},
        {"DCUDA_RANKS_PER_DEVICE", "many"},
        {"DCUDA_WAIT_TIMEOUT", "-1"},
        {"DCUDA_DEVICE", "1.5"},
        {"DCUDA_FORCE_NETWORK", "maybe"},
        {"DCUDA_HOST_WORLD_BARRIER", "2"},
        {"DCUDA_ALLOW_SHARED_GPUS", "sometimes"},
        {"DCUDA_WAIT_TIMEOUT", "nan"},
        {"DCUDA_WAIT_TIMEOUT", "inf"},
        {"DCUDA_RANKS_PER_DEVICE", "99999999999"},
        {"DCUDA_NETWORK_CHUNK", "1000000"},   // not a power of two
        {"DCUDA_NETWORK_CHUNK", "32768"},     // below the smallest
        {"DCUDA_NETWORK_CHUNK", "33554432"},  // above the largest
        {"DCUDA_NETWORK_CHUNK", "-1048576"},
        {"DCUDA_NETWORK_CHUNK", "1M"},
        {"DCUDA_STREAM_COPY_ENGINE_FROM", "-1"},
        {"DCUDA_STREAM_COPY_ENGINE_FROM", "4 MiB"},
        {"DCUDA_HEAP_BYTES", "1000"},        // not a power of two
        {"DCUDA_HEAP_BYTES", "128"},         // below the smallest block
        {"DCUDA_HEAP_BYTES", "2147483648"},  // above the largest window part
        {"DCUDA_HEAP_BYTES", "-256"}}) {
    try {
      runtime::read_settings({}, {{name, value}});
      throw dcuda_test::failure("no error for " + name + "=" + value);
    } catch (const runtime::error& e) {
      DCUDA_CHECK(contains(e.what(), name));
      DCUDA_CHECK(contains(e.what(), "'" + value + "'"));
    }
  }
}

// The network chunk's bad value says what it takes: a power of two in range, or model.
DCUDA_TEST(bad_network_chunk_says_model_is_accepted) {
  for (const std::string value : {"1000000", "32768", "1M", "Model"}) {
    dcuda_error_code code{};
    const std::string text = dcuda_test::error_of(
        [&] {
          runtime::read_settings({}, {{"DCUDA_NETWORK_CHUNK", value}});
        },
        &code);
    DCUDA_CHECK_EQ(code, DCUDA_ERROR_SETTING);
    DCUDA_CHECK(contains(text,
                         "dcuda_host_init: setting DCUDA_NETWORK_CHUNK "
                         "(--dcuda-network-chunk=...) has the bad value '" +
                             value +
                             "'; expected a power of two of bytes from 65536 to "
                             "16777216, or model (the performance model chooses it)"));
  }
}

DCUDA_TEST(cpu_timer_spans_first_start_to_last_stop) {
  runtime::cpu_timers timers(3);
  const auto t0 = runtime::cpu_timers::clock::now();
  timers.start(0, t0);
  timers.start(1, t0 + 1ms);
  timers.stop(0, t0 + 5ms);
  timers.start(2, t0 + 2ms);
  timers.stop(1, t0 + 6ms);
  DCUDA_CHECK(timers.results().empty());  // rank 2 has not stopped yet
  timers.stop(2, t0 + 10ms);
  DCUDA_CHECK_EQ(timers.results().size(), 1u);
  DCUDA_CHECK(std::abs(timers.results()[0] - 10.0) < 1e-9);
  for (int r = 0; r < 3; ++r) timers.start(r, t0 + 20ms);
  for (int r = 0; r < 3; ++r) timers.stop(r, t0 + 23ms);
  DCUDA_CHECK_EQ(timers.results().size(), 2u);
  DCUDA_CHECK(std::abs(timers.results()[1] - 3.0) < 1e-9);
}

DCUDA_TEST(cpu_timer_keeps_overlapping_measurements_apart) {
  // Rank 0 races ahead into measurement 2 while rank 1 is still in measurement 1.
  runtime::cpu_timers timers(2);
  const auto t0 = runtime::cpu_timers::clock::now();
  timers.start(0, t0);
  timers.start(1, t0 + 1ms);
  timers.stop(0, t0 + 2ms);
  timers.start(0, t0 + 3ms);  // measurement 2 begins
  timers.stop(0, t0 + 4ms);   // rank 0 done with measurement 2
  timers.stop(1, t0 + 10ms);  // rank 1 ends measurement 1
  DCUDA_CHECK_EQ(timers.results().size(), 1u);
  DCUDA_CHECK(std::abs(timers.results()[0] - 10.0) < 1e-9);
  timers.start(1, t0 + 11ms);
  timers.stop(1, t0 + 15ms);
  DCUDA_CHECK_EQ(timers.results().size(), 2u);
  DCUDA_CHECK(std::abs(timers.results()[1] - 12.0) < 1e-9);  // from rank 0's start at 3 ms
}

namespace {

protocol::wait_record waiting_for_tag(std::uint32_t tag, std::uint32_t needed,
                                      std::uint32_t available) {
  return {1,
          static_cast<std::uint32_t>(protocol::wait_kind::notifications),
          static_cast<std::uint32_t>(protocol::call::wait_notifications),
          static_cast<int>(tag),
          needed,
          available,
          1,
          0};
}

protocol::wait_record finished() {
  return {1,
          static_cast<std::uint32_t>(protocol::wait_kind::finished),
          static_cast<std::uint32_t>(protocol::call::gpu_finish),
          0,
          0,
          0,
          0,
          0};
}

}  // namespace

DCUDA_TEST(watchdog_stops_a_standstill_after_the_timeout) {
  protocol::wait_record records[4] = {waiting_for_tag(3, 1, 0), waiting_for_tag(7, 2, 0),
                                      finished(), finished()};
  runtime::watchdog dog(records, 4, 0, 1.0);
  const auto t0 = runtime::watchdog::clock::now();
  DCUDA_CHECK_EQ(dog.check(t0).what, runtime::watchdog::verdict::fine);
  DCUDA_CHECK_EQ(dog.check(t0 + 900ms).what, runtime::watchdog::verdict::fine);
  // Progress (a notification arrived for rank 1) restarts its clock.
  records[1].available = 1;
  records[1].version = 2;
  DCUDA_CHECK_EQ(dog.check(t0 + 950ms).what, runtime::watchdog::verdict::fine);
  // Rank 0 is stuck, rank 1 is not yet: some ranks waiting, none computing -> still no verdict
  // until every waiting rank is stuck.
  DCUDA_CHECK(dog.check(t0 + 1100ms).what != runtime::watchdog::verdict::standstill);
  // A rewrite with the same content (the device refreshes its record) is no progress.
  records[1].version = 3;
  const auto verdict = dog.check(t0 + 2000ms);
  DCUDA_CHECK_EQ(verdict.what, runtime::watchdog::verdict::standstill);
  DCUDA_CHECK(contains(verdict.report, "rank 0: dcuda_wait_notifications(tag 3, count 1): 0 of 1"));
  DCUDA_CHECK(contains(verdict.report, "rank 1: dcuda_wait_notifications(tag 7, count 2): 1 of 2"));
  DCUDA_CHECK(contains(verdict.report, "ranks 2-3: finished"));
}

DCUDA_TEST(watchdog_only_warns_while_some_rank_computes) {
  protocol::wait_record records[3] = {{}, waiting_for_tag(1, 1, 0), waiting_for_tag(1, 1, 0)};
  runtime::watchdog dog(records, 3, 0, 1.0);
  const auto t0 = runtime::watchdog::clock::now();
  DCUDA_CHECK_EQ(dog.check(t0).what, runtime::watchdog::verdict::fine);
  const auto verdict = dog.check(t0 + 1500ms);
  DCUDA_CHECK_EQ(verdict.what, runtime::watchdog::verdict::warning);
  DCUDA_CHECK(contains(verdict.report, "rank 0: not in a dcuda wait"));
  DCUDA_CHECK(contains(verdict.report, "ranks 1-2: dcuda_wait_notifications(tag 1, count 1)"));
  // The same picture is not reported twice.
  DCUDA_CHECK_EQ(dog.check(t0 + 3000ms).what, runtime::watchdog::verdict::fine);
  // Once rank 0 waits too, it is a standstill (after rank 0's own timeout).
  records[0] = waiting_for_tag(2, 1, 0);
  DCUDA_CHECK(dog.check(t0 + 3100ms).what != runtime::watchdog::verdict::standstill);
  DCUDA_CHECK_EQ(dog.check(t0 + 4200ms).what, runtime::watchdog::verdict::standstill);
}

DCUDA_TEST(watchdog_warns_when_no_rank_is_in_dcuda_and_the_kernel_waits_for_finish) {
  // Ranks 4-6 of the world on this GPU returned without dcuda_gpu_finish: every record shows
  // "not waiting" and never changes, while the delivery agent keeps the kernel alive.
  protocol::wait_record records[3] = {};
  runtime::watchdog dog(records, 3, 4, 1.0, {}, true);
  const auto t0 = runtime::watchdog::clock::now();
  DCUDA_CHECK_EQ(dog.check(t0).what, runtime::watchdog::verdict::fine);
  DCUDA_CHECK_EQ(dog.check(t0 + 900ms).what, runtime::watchdog::verdict::fine);
  const auto verdict = dog.check(t0 + 1100ms);
  DCUDA_CHECK_EQ(verdict.what, runtime::watchdog::verdict::warning);
  DCUDA_CHECK(contains(verdict.report, "kernel is still running"));
  DCUDA_CHECK(contains(verdict.report, "none of its 3 ranks (world ranks 4-6)"));
  DCUDA_CHECK(contains(verdict.report, "delivery agent"));
  DCUDA_CHECK(contains(verdict.report, "Call dcuda_gpu_finish before returning"));
  // Given once: the same situation later says nothing new.
  DCUDA_CHECK_EQ(dog.check(t0 + 5s).what, runtime::watchdog::verdict::fine);
}

DCUDA_TEST(watchdog_stays_quiet_about_returned_ranks_without_a_delivery_agent) {
  // One process: the kernel ends by itself when its blocks return, so quiet ranks are computing.
  protocol::wait_record records[3] = {};
  runtime::watchdog dog(records, 3, 0, 1.0);
  const auto t0 = runtime::watchdog::clock::now();
  DCUDA_CHECK_EQ(dog.check(t0).what, runtime::watchdog::verdict::fine);
  DCUDA_CHECK_EQ(dog.check(t0 + 1100ms).what, runtime::watchdog::verdict::fine);
  DCUDA_CHECK_EQ(dog.check(t0 + 1h).what, runtime::watchdog::verdict::fine);
}

DCUDA_TEST(watchdog_quiet_timer_restarts_when_a_rank_is_seen_in_a_wait) {
  protocol::wait_record records[2] = {};
  runtime::watchdog dog(records, 2, 0, 1.0, {}, true);
  const auto t0 = runtime::watchdog::clock::now();
  DCUDA_CHECK_EQ(dog.check(t0).what, runtime::watchdog::verdict::fine);
  // Between two checks rank 1 published a wait and ended it: its record shows "not waiting" again,
  // but its version has moved, so the rank was seen in a wait.
  records[1].version = 2;
  records[1].call_id = static_cast<std::uint32_t>(protocol::call::wait_notifications);
  records[1].started = 1;
  DCUDA_CHECK_EQ(dog.check(t0 + 800ms).what, runtime::watchdog::verdict::fine);
  DCUDA_CHECK_EQ(dog.check(t0 + 1100ms).what, runtime::watchdog::verdict::fine);  // 0.3 s quiet
  // Rank 0 shows a published wait at a check: seen again.
  records[0] = waiting_for_tag(2, 1, 0);
  DCUDA_CHECK_EQ(dog.check(t0 + 1500ms).what, runtime::watchdog::verdict::fine);
  records[0].kind = static_cast<std::uint32_t>(protocol::wait_kind::none);
  records[0].version = 2;
  DCUDA_CHECK_EQ(dog.check(t0 + 1600ms).what, runtime::watchdog::verdict::fine);
  DCUDA_CHECK_EQ(dog.check(t0 + 2550ms).what, runtime::watchdog::verdict::fine);  // 0.95 s quiet
  const auto verdict = dog.check(t0 + 2650ms);
  DCUDA_CHECK_EQ(verdict.what, runtime::watchdog::verdict::warning);
  DCUDA_CHECK(contains(verdict.report, "none of its 2 ranks (world ranks 0-1)"));
  DCUDA_CHECK(contains(verdict.report, "dcuda_gpu_finish"));
}

DCUDA_TEST(watchdog_warning_says_running_ranks_may_have_skipped_gpu_finish) {
  // Rank 0 returned without dcuda_gpu_finish; ranks 1-2 wait for it in dcuda_gpu_finish.
  protocol::wait_record in_finish = {1,
                                     static_cast<std::uint32_t>(protocol::wait_kind::barrier),
                                     static_cast<std::uint32_t>(protocol::call::gpu_finish),
                                     1,
                                     3,
                                     2,
                                     1,
                                     0};
  protocol::wait_record records[3] = {{}, in_finish, in_finish};
  runtime::watchdog dog(records, 3, 0, 1.0);
  const auto t0 = runtime::watchdog::clock::now();
  DCUDA_CHECK_EQ(dog.check(t0).what, runtime::watchdog::verdict::fine);
  const auto verdict = dog.check(t0 + 1100ms);
  DCUDA_CHECK_EQ(verdict.what, runtime::watchdog::verdict::warning);
  DCUDA_CHECK(contains(verdict.report, "rank 0: not in a dcuda wait"));
  DCUDA_CHECK(contains(verdict.report, "without calling dcuda_gpu_finish"));
  // Ranks stuck elsewhere than dcuda_gpu_finish get no such sentence.
  protocol::wait_record others[3] = {{}, waiting_for_tag(1, 1, 0), waiting_for_tag(1, 1, 0)};
  runtime::watchdog other_dog(others, 3, 0, 1.0);
  DCUDA_CHECK_EQ(other_dog.check(t0).what, runtime::watchdog::verdict::fine);
  const auto plain = other_dog.check(t0 + 1100ms);
  DCUDA_CHECK_EQ(plain.what, runtime::watchdog::verdict::warning);
  DCUDA_CHECK(!contains(plain.report, "dcuda_gpu_finish"));
}

DCUDA_TEST(watchdog_with_zero_timeout_never_fires) {
  protocol::wait_record records[1] = {};
  records[0].kind = static_cast<std::uint32_t>(protocol::wait_kind::barrier);
  runtime::watchdog dog(records, 1, 0, 0.0);
  const auto t0 = runtime::watchdog::clock::now();
  DCUDA_CHECK_EQ(dog.check(t0).what, runtime::watchdog::verdict::fine);
  DCUDA_CHECK_EQ(dog.check(t0 + 1h).what, runtime::watchdog::verdict::fine);
}

DCUDA_TEST(error_reports_name_rank_call_and_value) {
  protocol::error_report report{};
  report.rank = 3;
  report.thread = 0;
  report.call_id = static_cast<std::uint16_t>(protocol::call::put_notify);
  report.code = static_cast<std::uint16_t>(protocol::error_code::tag_out_of_range);
  report.values[0] = 300;
  DCUDA_CHECK_EQ(runtime::describe_error(report),
                 std::string("rank 3 (thread 0) in dcuda_put_notify: tag 300 is outside 0..255"));
  report.code = static_cast<std::uint16_t>(protocol::error_code::target_range_outside);
  report.values[0] = 60;
  report.values[1] = 8;
  report.values[2] = 64;
  report.values[3] = 5;
  DCUDA_CHECK(contains(runtime::describe_error(report),
                       "offset 60 + size 8 exceeds the 64-byte window of target rank 5"));
  for (int code = 1; code < static_cast<int>(protocol::error_code::count_); ++code) {
    report.code = static_cast<std::uint16_t>(code);
    DCUDA_CHECK(!contains(runtime::describe_error(report), "error code"));  // every code has text
  }
  for (int c = 0; c < static_cast<int>(protocol::call::count_); ++c) {
    const auto call = static_cast<protocol::call>(c);
    if (call == protocol::call::ring_poll) continue;  // not a call of the API
    const std::string name = protocol::call_name(call);
    DCUDA_CHECK(name.rfind("dcuda_", 0) == 0 || name.rfind("dcuda::", 0) == 0);
  }
}

// The distributed arrays' errors name the index or range and the array's size, or what is wrong
// with the distribution.
DCUDA_TEST(array_errors_name_the_index_and_the_size_or_the_distribution) {
  protocol::error_report report{};
  report.rank = 3;
  report.call_id = static_cast<std::uint16_t>(protocol::call::array_get);
  report.code = static_cast<std::uint16_t>(protocol::error_code::array_index_outside);
  report.values[0] = 100;
  report.values[1] = 1;
  report.values[2] = 100;
  DCUDA_CHECK(contains(runtime::describe_error(report),
                       "rank 3 (thread 0) in dcuda::array::get: elements [100, 100 + 1) are "
                       "outside the array of 100 elements"));
  report.call_id = static_cast<std::uint16_t>(protocol::call::array_allocate);
  report.code = static_cast<std::uint16_t>(protocol::error_code::bad_distribution);
  report.values[0] = 7;
  report.values[1] = 15;
  report.values[2] = 6;
  DCUDA_CHECK(contains(runtime::describe_error(report),
                       "in dcuda::array::allocate: the distribution is for 7 ranks, but the "
                       "array's communicator has 6"));
  report.values[1] = 0;
  DCUDA_CHECK(contains(runtime::describe_error(report),
                       "the distribution deals to 7 ranks in blocks of 0 elements"));
}

// The heaps' errors name the sizes, the pointer and, for a refused free, why.
DCUDA_TEST(heap_errors_name_the_sizes_and_why_a_free_was_refused) {
  protocol::error_report report{};
  report.rank = 4;
  report.call_id = static_cast<std::uint16_t>(protocol::call::rank_malloc);
  report.code = static_cast<std::uint16_t>(protocol::error_code::heap_exhausted);
  report.values[0] = 5000;
  report.values[1] = 4096;
  report.values[2] = 65536;
  DCUDA_CHECK(contains(runtime::describe_error(report),
                       "rank 4 (thread 0) in dcuda_malloc: 5000 bytes asked for, but the largest "
                       "free block of this rank's heap of 65536 bytes is 4096"));
  report.values[2] = 0;
  DCUDA_CHECK(contains(runtime::describe_error(report),
                       "no rank has a heap (DCUDA_HEAP_BYTES is 0); 5000 bytes were asked for"));
  report.call_id = static_cast<std::uint16_t>(protocol::call::rank_free);
  report.code = static_cast<std::uint16_t>(protocol::error_code::bad_heap_free);
  report.values[0] = 2;
  report.values[1] = protocol::heap_window;
  report.values[2] = 768;
  const std::pair<protocol::heap_free_refusal, const char*> reasons[] = {
      {protocol::heap_free_refusal::not_heap, "does not name a heap"},
      {protocol::heap_free_refusal::other_rank, "names rank 2's heap"},
      {protocol::heap_free_refusal::not_allocated, "no allocation starts at the pointer"},
      {protocol::heap_free_refusal::inside_block, "points inside an allocation"},
      {protocol::heap_free_refusal::outside_segment, "past the end of this rank's heap"},
      {protocol::heap_free_refusal::heap_window_free, "is the heaps' window"}};
  for (const auto& [why, text] : reasons) {
    report.values[3] = static_cast<std::int64_t>(why);
    const std::string described = runtime::describe_error(report);
    DCUDA_CHECK(contains(described, text));
    if (why != protocol::heap_free_refusal::heap_window_free) {
      DCUDA_CHECK(contains(described, "{rank 2, window 2147483423, offset 768}"));
    }
  }
}

DCUDA_TEST(malformed_ring_records_name_the_sending_process_and_the_field) {
  protocol::error_report report{};
  report.rank = 2;
  report.call_id = static_cast<std::uint16_t>(protocol::call::ring_poll);
  report.code = static_cast<std::uint16_t>(protocol::error_code::bad_ring_record);
  report.values[0] = 1;  // the second ring of this GPU
  report.values[1] = 100;
  const std::vector<int> senders{0, 3};
  DCUDA_CHECK_EQ(runtime::describe_error(report, senders),
                 std::string("rank 2 (thread 0) in the poll of its peer rings (inside a dcuda call "
                             "that waits): the record in its peer ring from process 3 is not one "
                             "dcuda writes: a payload of 100 bytes (the ring carries at most 16); "
                             "nothing was written (is every process of the node running the same "
                             "program and dcuda version?)"));
  report.values[1] = 4;
  report.values[2] = 62;
  report.values[3] = std::int64_t{5} << 32 | 64;
  DCUDA_CHECK(contains(runtime::describe_error(report, senders),
                       "a payload of 4 bytes at offset 62 ends outside the 64-byte window in "
                       "slot 5"));
  DCUDA_CHECK(contains(runtime::describe_error(report), "from peer GPU 1 "));  // no sender list
  DCUDA_CHECK_EQ(runtime::code_of(report), DCUDA_ERROR_PEER);
}

DCUDA_TEST(collective_mismatch_names_both_processes_and_calls) {
  protocol::error_report report{};
  report.rank = 0;
  report.call_id = static_cast<std::uint16_t>(protocol::call::comm_barrier);
  report.code = static_cast<std::uint16_t>(protocol::error_code::collective_mismatch);
  report.values[0] = 0;
  report.values[1] = 1;
  report.values[2] = static_cast<std::int64_t>(protocol::call::win_create);
  DCUDA_CHECK_EQ(runtime::describe_error(report),
                 std::string("rank 0 (thread 0) in dcuda_comm_barrier: collective calls of "
                             "DCUDA_COMM_WORLD differ: process 0 called dcuda_comm_barrier while "
                             "process 1 called dcuda_win_create (every rank must make the same "
                             "collective calls in the same order)"));
}

DCUDA_TEST(node_barrier_wait_names_the_processes_that_have_not_joined) {
  protocol::wait_record record{};
  record.kind = static_cast<std::uint32_t>(protocol::wait_kind::node_barrier);
  record.call_id = static_cast<std::uint32_t>(protocol::call::comm_barrier);
  record.detail = 5;
  record.needed = 0b11110u;  // process 0 waits for 1-4
  record.available = 0b10100u;
  DCUDA_CHECK_EQ(runtime::describe_wait(record, 4),
                 std::string("dcuda_comm_barrier: waits in collective 5 of DCUDA_COMM_WORLD (met "
                             "on the GPUs of the node) for processes 1 3, which have not joined "
                             "it"));
  record.available = 0b11100u;
  DCUDA_CHECK(
      contains(runtime::describe_wait(record, 4), "for process 1, which has not joined it"));
}

DCUDA_TEST(a_served_runs_messages_name_the_call_that_started_it) {
  DCUDA_CHECK_EQ(runtime::named_by_call("dcuda_host_run: rank 1 (thread 0) in dcuda_notify: tag",
                                        "dcuda_host_run_async"),
                 std::string("dcuda_host_run_async: rank 1 (thread 0) in dcuda_notify: tag"));
  DCUDA_CHECK_EQ(runtime::named_by_call("dcuda_host_run: no progress", "dcuda_host_run"),
                 std::string("dcuda_host_run: no progress"));
  DCUDA_CHECK_EQ(runtime::named_by_call("dcuda_host_run_async: done", "dcuda_host_run_async"),
                 std::string("dcuda_host_run_async: done"));
  DCUDA_CHECK_EQ(runtime::named_by_call("cudaEventRecord failed", "dcuda_host_run_async"),
                 std::string("dcuda_host_run_async: cudaEventRecord failed"));
}

DCUDA_TEST(layout_mismatch_names_both_stamps_and_what_to_do) {
  DCUDA_CHECK_EQ(runtime::describe_layout_mismatch(0x12abu, 0xc0ffee01u),
                 std::string("dcuda_host_run: the kernel's dcuda calls were compiled against the "
                             "headers of another dcuda build (layout 0x12ab; this library's "
                             "0xc0ffee01): rebuild the kernel with the headers installed beside "
                             "this library; the run was stopped"));
}

// A kernel built against other headers is told apart by its stamp: every value and its place in
// the list changes the stamp, and no stamp is 0 (the host's "no mismatch").
DCUDA_TEST(layout_stamps_differ_for_every_size_and_order) {
  using protocol::layout_stamp_of;
  DCUDA_CHECK(protocol::context_layout_stamp != 0u);
  DCUDA_CHECK(layout_stamp_of({1, 2}) != layout_stamp_of({2, 1}));
  DCUDA_CHECK(layout_stamp_of({1, 2}) != layout_stamp_of({1, 2, 0}));
  DCUDA_CHECK(layout_stamp_of({sizeof(dcuda_context)}) !=
              layout_stamp_of({sizeof(dcuda_context) + 8}));
  DCUDA_CHECK_EQ(layout_stamp_of({1, 2}), layout_stamp_of({1, 2}));
  DCUDA_CHECK(layout_stamp_of({}) != 0u);
}
