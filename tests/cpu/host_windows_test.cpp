// Host windows (runtime/host_windows.h): handles, their refusal once freed or when they are not
// host windows, the target checks of stream-ordered operations, and the wait thresholds
// (runtime/stream_operations.h) in 32-bit wraparound.
#include <cstdint>
#include <string>
#include <vector>

#include "dcuda/detail/protocol/host_window_view.h"
#include "dcuda/detail/protocol/window_table.h"
#include "runtime/error.h"
#include "runtime/host_windows.h"
#include "runtime/stream_operations.h"
#include "error_text.h"
#include "test_main.h"

using dcuda::runtime::host_window;
using dcuda::runtime::host_window_table;

namespace {

using dcuda_test::contains;
using dcuda_test::error_of;

host_window two_processes(std::uint64_t size0, std::uint64_t size1) {
  static char memory[2][64];
  return host_window{{memory[0], size1 > 0 ? memory[1] : nullptr}, {size0, size1}};
}

}  // namespace

DCUDA_TEST(host_window_handles_are_found_until_freed_and_never_device_windows) {
  host_window_table table;
  const int first = table.add("create", two_processes(64, 32));
  const int second = table.add("create", two_processes(16, 0));
  DCUDA_CHECK(first != second);
  DCUDA_CHECK(dcuda::protocol::window_slot(first) >= dcuda::protocol::max_windows);
  DCUDA_CHECK_EQ(table.find("put", first).sizes[1], std::uint64_t{32});
  DCUDA_CHECK_EQ(table.find("put", second).sizes[0], std::uint64_t{16});

  table.remove("free", first);
  dcuda_error_code code{};
  const std::string freed = error_of([&] { table.find("dcuda_put_on_stream", first); }, &code);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_ARGUMENT);
  DCUDA_CHECK(contains(freed, "dcuda_put_on_stream: window " + std::to_string(first)));
  DCUDA_CHECK(contains(freed, "released by dcuda_host_win_free"));
  // The slot is used again with a new generation: the old handle stays refused.
  const int third = table.add("create", two_processes(8, 8));
  DCUDA_CHECK(third != first);
  DCUDA_CHECK_EQ(dcuda::protocol::window_slot(third), dcuda::protocol::window_slot(first));
  DCUDA_CHECK(!error_of([&] { table.find("put", first); }).empty());
  DCUDA_CHECK(error_of([&] { table.find("put", third); }).empty());

  const int device_window = dcuda::protocol::encode_window(3, 1);
  DCUDA_CHECK(contains(error_of([&] { table.find("put", device_window); }),
                       "created with dcuda_win_create, not a host window"));
  DCUDA_CHECK(contains(error_of([&] { table.find("put", -1); }), "not a window handle"));
  const int never = dcuda::protocol::encode_window(host_window_table::first_slot + 100, 5);
  DCUDA_CHECK(contains(error_of([&] { table.find("put", never); }),
                       "not a handle dcuda_host_win_create gave"));
}

DCUDA_TEST(host_window_slots_run_out_with_a_message) {
  host_window_table table;
  for (int i = 0; i < host_window_table::slots; ++i) table.add("create", two_processes(8, 8));
  dcuda_error_code code{};
  const std::string full =
      error_of([&] { table.add("dcuda_host_win_create", two_processes(8, 8)); }, &code);
  DCUDA_CHECK_EQ(code, DCUDA_ERROR_INVALID_STATE);
  DCUDA_CHECK(contains(full, "dcuda_host_win_create: all 128 host window slots are in use"));
}

DCUDA_TEST(stream_operation_targets_are_checked_against_the_target_processes_window) {
  const host_window window = two_processes(64, 32);
  using dcuda::runtime::check_window_target;
  DCUDA_CHECK(error_of([&] { check_window_target("put", 7, window, 5, 1, true, 0, 32); }).empty());
  DCUDA_CHECK(error_of([&] { check_window_target("put", 7, window, 5, 1, true, 32, 0); }).empty());
  const std::string outside =
      error_of([&] { check_window_target("dcuda_put_on_stream", 7, window, 5, 1, true, 16, 17); });
  DCUDA_CHECK(contains(outside,
                       "dcuda_put_on_stream: bytes [16, 16 + 17) are outside window 7 "
                       "of target rank 5 (process 1 exposed 32 bytes)"));
  // Offsets near the top of size_t do not wrap around into the window.
  DCUDA_CHECK(!error_of([&] {
                 check_window_target("put", 7, window, 5, 1, true, ~std::size_t{0}, 2);
               }).empty());
  const std::string network = error_of(
      [&] { check_window_target("dcuda_notify_on_stream", 7, window, 9, 1, false, 0, 0); });
  DCUDA_CHECK(contains(
      network,
      "target rank 9 (process 1) is reached neither by the peer path nor through the network"));
  // A process reached through the network is not mapped here: its agreed size is what counts.
  const host_window remote{{two_processes(64, 32).bases[0], nullptr}, {64, 32}};
  DCUDA_CHECK(error_of([&] { check_window_target("put", 7, remote, 5, 1, true, 0, 32); }).empty());
  DCUDA_CHECK(contains(error_of([&] { check_window_target("put", 7, remote, 5, 1, true, 31, 2); }),
                       "bytes [31, 31 + 2) are outside window 7 of target rank 5 (process 1 "
                       "exposed 32 bytes)"));
  // A process that exposed nothing takes no bytes, but a notification without data.
  const host_window empty = two_processes(64, 0);
  DCUDA_CHECK(error_of([&] { check_window_target("notify", 7, empty, 5, 1, true, 0, 0); }).empty());
  DCUDA_CHECK(!error_of([&] { check_window_target("put", 7, empty, 5, 1, true, 0, 1); }).empty());

  DCUDA_CHECK(contains(error_of([&] { dcuda::runtime::check_target_rank("put", 12, 12); }),
                       "put: target rank 12 is outside 0..11"));
  DCUDA_CHECK(contains(error_of([&] { dcuda::runtime::check_stream_tag("wait", 3, 256); }),
                       "wait: tag 256 (rank 3) is outside 0..255"));
  DCUDA_CHECK(contains(error_of([&] { dcuda::runtime::check_stream_count("wait", 3, -2); }),
                       "wait: count -2 (rank 3) is negative"));
  DCUDA_CHECK(error_of([&] { dcuda::runtime::check_stream_count("wait", 3, 0); }).empty());
  DCUDA_CHECK(error_of([&] { dcuda::runtime::check_get_source("get", 4, 1, true); }).empty());
  DCUDA_CHECK(contains(
      error_of([&] { dcuda::runtime::check_get_source("dcuda_get_on_stream", 4, 1, false); }),
      "dcuda_get_on_stream: target rank 4 (process 1) is reached only through the network"));
}

DCUDA_TEST(wait_thresholds_add_up_per_rank_and_tag_and_wrap_like_the_counters) {
  dcuda::runtime::wait_thresholds thresholds(2);
  DCUDA_CHECK_EQ(thresholds.consume(0, 7, 3), 3u);
  DCUDA_CHECK_EQ(thresholds.consume(0, 7, 2), 5u);  // the second wait needs 2 beyond the first
  DCUDA_CHECK_EQ(thresholds.consume(1, 7, 1), 1u);  // other rank, same tag: its own count
  DCUDA_CHECK_EQ(thresholds.consume(0, 8, 4), 4u);
  // Past 2^32 the threshold wraps; the stream wait compares in wraparound, as the counter counts.
  dcuda::runtime::wait_thresholds wrapping(1);
  DCUDA_CHECK_EQ(wrapping.consume(0, 0, 0x7fffffff), 0x7fffffffu);
  DCUDA_CHECK_EQ(wrapping.consume(0, 0, 0x7fffffff), 0xfffffffeu);
  DCUDA_CHECK_EQ(wrapping.consume(0, 0, 5), 3u);
  DCUDA_CHECK(dcuda::protocol::reached(4u, 3u) && !dcuda::protocol::reached(2u, 3u));
  DCUDA_CHECK(dcuda::protocol::reached(3u, 0xfffffffeu));  // 5 later, across the wrap
}

DCUDA_TEST(a_ranks_put_into_a_host_window_finds_the_target_buffer_and_counters_or_the_fault) {
  using dcuda::protocol::find_host_put_target;
  using dcuda::protocol::host_put_fault;
  using dcuda::protocol::host_rank_target;
  using dcuda::protocol::host_window_entry;
  constexpr int processes = 2;
  constexpr int world = 4;  // ranks 0, 1 in process 0; 2, 3 in process 1
  static std::uint32_t counters[world][dcuda::protocol::tag_count];
  const host_rank_target targets[world] = {
      {counters[0], 0, 0}, {counters[1], 0, 0}, {counters[2], 1, 0}, {counters[3], 1, 0}};
  std::vector<host_window_entry> windows(dcuda::protocol::host_window_slots * processes,
                                         host_window_entry{});
  const int handle = dcuda::protocol::encode_window(dcuda::protocol::host_window_first_slot + 3, 5);
  DCUDA_CHECK(dcuda::protocol::is_host_window_handle(handle));
  DCUDA_CHECK(!dcuda::protocol::is_host_window_handle(dcuda::protocol::encode_window(3, 5)));
  DCUDA_CHECK(!dcuda::protocol::is_host_window_handle(-1));
  windows[dcuda::protocol::host_window_index(handle, 0, processes)] = {0x1000, 64, 5, 0};
  windows[dcuda::protocol::host_window_index(handle, 1, processes)] = {0x9000, 32, 5, 0};
  auto find = [&](int win, int rank, std::int64_t offset, std::int64_t size, int tag) {
    return find_host_put_target(windows.data(), targets, processes, world, win, rank, offset, size,
                                true, tag);
  };

  const auto good = find(handle, 3, 8, 24, 7);
  DCUDA_CHECK(good.fault == host_put_fault::none);
  DCUDA_CHECK_EQ(good.destination, std::uint64_t{0x9008});  // process 1's buffer
  DCUDA_CHECK(good.counters == counters[3]);
  DCUDA_CHECK_EQ(find(handle, 1, 0, 64, 0).destination, std::uint64_t{0x1000});

  DCUDA_CHECK(find(handle, 3, 8, 25, 7).fault == host_put_fault::range_outside);
  DCUDA_CHECK_EQ(find(handle, 3, 8, 25, 7).window_size, std::uint64_t{32});
  DCUDA_CHECK(find(handle, 3, 33, 0, 7).fault == host_put_fault::range_outside);
  DCUDA_CHECK(find(handle, 3, -1, 4, 7).fault == host_put_fault::negative_size);
  DCUDA_CHECK(find(handle, 3, 0, -4, 7).fault == host_put_fault::negative_size);
  DCUDA_CHECK(find(handle, 4, 0, 4, 7).fault == host_put_fault::rank_outside);
  DCUDA_CHECK(find(handle, -1, 0, 4, 7).fault == host_put_fault::rank_outside);
  DCUDA_CHECK(find(handle, 2, 0, 4, 256).fault == host_put_fault::tag_outside);
  // A plain put has no tag to check.
  DCUDA_CHECK(
      find_host_put_target(windows.data(), targets, processes, world, handle, 2, 0, 4, false, 999)
          .fault == host_put_fault::none);
  // A stale generation, a device window's handle, a free slot, no host windows at all.
  DCUDA_CHECK(find(dcuda::protocol::encode_window(dcuda::protocol::host_window_first_slot + 3, 4),
                   2, 0, 4, 0)
                  .fault == host_put_fault::bad_window);
  DCUDA_CHECK(find(dcuda::protocol::encode_window(3, 5), 2, 0, 4, 0).fault ==
              host_put_fault::bad_window);
  DCUDA_CHECK(
      find(dcuda::protocol::encode_window(dcuda::protocol::host_window_first_slot, 5), 2, 0, 4, 0)
          .fault == host_put_fault::bad_window);
  DCUDA_CHECK(
      find_host_put_target(nullptr, nullptr, processes, world, handle, 2, 0, 4, true, 0).fault ==
      host_put_fault::bad_window);
  // A process reached through the network: no base on this GPU, its size known; the range and
  // tag are checked here all the same, and the put goes to the proxy.
  const host_rank_target far[world] = {
      {counters[0], 0, 0}, {counters[1], 0, 0}, {nullptr, 1, 0}, {nullptr, 1, 0}};
  const std::uint64_t mapped_base =
      windows[dcuda::protocol::host_window_index(handle, 1, processes)].base;
  windows[dcuda::protocol::host_window_index(handle, 1, processes)].base = 0;
  const auto through = [&](std::int64_t offset, std::int64_t size, int tag) {
    return find_host_put_target(windows.data(), far, processes, world, handle, 3, offset, size,
                                true, tag);
  };
  const auto far_put = through(8, 8, 0);
  DCUDA_CHECK(far_put.fault == host_put_fault::none);
  DCUDA_CHECK(far_put.through_network);
  DCUDA_CHECK(far_put.counters == nullptr);
  DCUDA_CHECK_EQ(far_put.destination, 0u);
  DCUDA_CHECK_EQ(far_put.process, 1);
  DCUDA_CHECK(through(0, 0, 3).fault == host_put_fault::none);
  DCUDA_CHECK(through(8, 25, 0).fault == host_put_fault::range_outside);
  DCUDA_CHECK(through(24, 8, 0).fault == host_put_fault::none);
  DCUDA_CHECK(through(-1, 4, 0).fault == host_put_fault::negative_size);
  DCUDA_CHECK(through(0, 4, 256).fault == host_put_fault::tag_outside);
  DCUDA_CHECK(!find(handle, 0, 0, 4, 0).through_network);
  windows[dcuda::protocol::host_window_index(handle, 1, processes)].base = mapped_base;
  // A process that exposed nothing takes a notification without data, and no bytes.
  windows[dcuda::protocol::host_window_index(handle, 1, processes)] = {0, 0, 5, 0};
  DCUDA_CHECK(find(handle, 2, 0, 0, 1).fault == host_put_fault::none);
  DCUDA_CHECK(find(handle, 2, 0, 1, 1).fault == host_put_fault::range_outside);
}

DCUDA_TEST(a_host_window_is_live_where_its_process_column_holds_its_generation) {
  using dcuda::protocol::host_window_entry;
  using dcuda::protocol::host_window_live;
  constexpr int processes = 2;
  std::vector<host_window_entry> windows(dcuda::protocol::host_window_slots * processes,
                                         host_window_entry{});
  const int slot = dcuda::protocol::host_window_first_slot + 7;
  const int handle = dcuda::protocol::encode_window(slot, 2);
  windows[dcuda::protocol::host_window_index(handle, 1, processes)] = {0x4000, 16, 2, 0};
  DCUDA_CHECK(host_window_live(windows.data(), handle, 1, processes));
  // Not created in process 0's column, freed and taken again (generation 3), a device window's
  // handle, generation 0 over a free slot (whose generation is 0 too), no host windows.
  DCUDA_CHECK(!host_window_live(windows.data(), handle, 0, processes));
  DCUDA_CHECK(
      !host_window_live(windows.data(), dcuda::protocol::encode_window(slot, 3), 1, processes));
  DCUDA_CHECK(
      !host_window_live(windows.data(), dcuda::protocol::encode_window(7, 2), 1, processes));
  DCUDA_CHECK(
      !host_window_live(windows.data(), dcuda::protocol::encode_window(slot + 1, 0), 1, processes));
  DCUDA_CHECK(!host_window_live(nullptr, handle, 1, processes));
}
