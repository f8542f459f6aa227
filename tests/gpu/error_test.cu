// Misuse of the API is reported with the rank, the call and the bad value, and ends the run with
// a nonzero exit; a wait that makes no progress is reported by the watchdog. Each scenario runs in
// a child process, because dcuda ends a process whose run failed.
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::contains;
using gpu_test::require_gpu;
using gpu_test::run_child;
using gpu_test::run_dcuda;

namespace {

enum class misuse : int {
  tag_too_large,
  rank_out_of_range,
  bad_communicator,
  window_none,
  window_used_after_free,
  target_range_outside,
  source_outside_window,
  negative_size,
  negative_count,
  one_thread_calls_collective,
  flush_bad_window,
  notify_rank_minus_one,
  put_rank_minus_one,
  offset_int_max,
  size_past_int_max,
  negative_offset,
  negative_tag,
  wait_negative_tag,
  test_negative_count,
  thread_call_off_thread_zero,
  thread_put_too_large,
  thread_put_outside_window,
  thread_wait_negative_tag,
  get_outside_window,
  get_negative_offset,
  atomic_misaligned,
  atomic_bad_window,
  atomic_thread_off_thread_zero,
  gptr_add_uneven,
  put_gptr_offset_too_large,
  heap_exhausted,
  heap_free_twice,
  heap_free_other_rank,
  heap_free_inside,
  heap_free_window,
  heap_none,
  array_bad_distribution,
  array_index_outside,
  // Window misuses, with a kernel of their own (window_misuse_kernel):
  double_win_free,
  get_after_free,
  get_win_none_after_free,
  null_window_base,
  window_from_earlier_run,
};

struct misuse_data {
  misuse what;
  int* buffer;  // 256 ints
  int run;      // 1, 2: runs of one context
};

__global__ void misuse_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  misuse_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  dcuda_win win;
  // Every rank's window is 256 bytes, except rank 2's where a pointer's arithmetic must find one
  // that differs.
  const int window_bytes = data->what == misuse::gptr_add_uneven && rank == 2 ? 128 : 256;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, data->buffer + 64 * rank, window_bytes, &win);
  if (data->what == misuse::array_index_outside) {  // every rank allocates; rank 1 reads past it
    auto numbers = dcuda::array<int>::allocate(gst, DCUDA_COMM_DEVICE,
                                               dcuda::distribution::blocked(100, size));
    if (rank == 1) numbers.get(gst, 100);
  }
  if (rank == 1) {  // rank 1 misbehaves; rank 0 waits for it
    int* mine = data->buffer + 64 * rank;
    switch (data->what) {
      case misuse::tag_too_large:
        dcuda_put_notify(gst, win, 0, 0, 4, mine, 300);
        break;
      case misuse::rank_out_of_range:
        dcuda_notify(gst, size, DCUDA_COMM_DEVICE, 1);
        break;
      case misuse::bad_communicator:
        dcuda_comm_barrier(gst, 7);
        break;
      case misuse::window_none:
        dcuda_put(gst, DCUDA_WIN_NONE, 0, 0, 4, mine);
        break;
      case misuse::target_range_outside:
        dcuda_put(gst, win, 0, 60 * 4, 8 * 4, mine);
        break;
      case misuse::source_outside_window:
        dcuda_put(gst, win, 0, 0, 4, data->buffer + 200);
        break;
      case misuse::negative_size:
        dcuda_put(gst, win, 0, 0, -8, mine);
        break;
      case misuse::negative_count:
        dcuda_wait_notifications(gst, 1, -1);
        break;
      case misuse::one_thread_calls_collective:
        if (threadIdx.x != 0) return;  // the other threads of the rank leave the kernel
        dcuda_notify(gst, 0, DCUDA_COMM_DEVICE, 1);
        break;
      case misuse::flush_bad_window:
        dcuda_win_flush(gst, win + 1);
        break;
      case misuse::notify_rank_minus_one:
        // -1 matches the empty route cache (it keeps -1 as "no target"): its checks must still run.
        dcuda_notify(gst, -1, DCUDA_COMM_WORLD, 1);
        break;
      case misuse::put_rank_minus_one:
        dcuda_put(gst, win, -1, 0, 4, mine);
        break;
      case misuse::offset_int_max:
        dcuda_put(gst, win, 0, INT_MAX, 4, mine);
        break;
      case misuse::size_past_int_max:
        dcuda_put(gst, win, 0, 8, INT_MAX, mine);  // offset + size overflows an int
        break;
      case misuse::negative_offset:
        dcuda_put_notify(gst, win, 0, -4, 4, mine, 1);
        break;
      case misuse::negative_tag:
        dcuda_notify(gst, 0, DCUDA_COMM_DEVICE, -1);
        break;
      case misuse::wait_negative_tag:
        dcuda_wait_notifications(gst, -3, 1);
        break;
      case misuse::test_negative_count:
        dcuda_test_notifications(gst, 1, -2);
        break;
      case misuse::thread_call_off_thread_zero:
        if (threadIdx.x == 5) dcuda_notify_thread(gst, 0, DCUDA_COMM_DEVICE, 1);
        break;
      case misuse::thread_put_too_large:
        if (threadIdx.x == 0) dcuda_put_notify_thread(gst, win, 0, 0, 17, mine, 1);
        break;
      case misuse::thread_put_outside_window:
        if (threadIdx.x == 0) dcuda_put_thread(gst, win, 0, 252, 8, mine);
        break;
      case misuse::thread_wait_negative_tag:
        if (threadIdx.x == 0) dcuda_wait_notifications_thread(gst, -3, 1);
        break;
      case misuse::get_outside_window:
        dcuda_get(gst, win, 0, 250, 8, mine);
        break;
      case misuse::get_negative_offset:
        dcuda_get(gst, win, 0, -4, 4, mine);
        break;
      case misuse::atomic_misaligned:
        dcuda_atomic_fetch_add(gst, dcuda_gptr_of(win, 0, 6), 1u);
        break;
      case misuse::atomic_bad_window:
        dcuda_atomic_swap(gst, dcuda_gptr_of(win + 1, 0, 8), 5ull);
        break;
      case misuse::atomic_thread_off_thread_zero:
        if (threadIdx.x == 7) dcuda_atomic_compare_swap_thread(gst, dcuda_gptr_of(win, 0, 8), 0, 1);
        break;
      case misuse::gptr_add_uneven:
        if (threadIdx.x == 3) dcuda_gptr_add(gst, dcuda_gptr_of(win, 0, 0), 600);
        break;
      case misuse::put_gptr_offset_too_large:
        dcuda_put_gptr(gst, dcuda_gptr_of(win, 0, 1ull << 32), 4, mine);
        break;
      case misuse::heap_exhausted:  // the heaps are 1 MiB: half of it taken, the rest cannot serve
        dcuda_malloc(gst, dcuda_malloc(gst, 300u << 10).offset + (600u << 10));
        break;
      case misuse::heap_free_twice: {
        const dcuda_gptr block = dcuda_malloc(gst, 100);
        dcuda_free(gst, block);
        dcuda_free(gst, block);
        break;
      }
      case misuse::heap_free_other_rank:
        dcuda_free(gst, dcuda_gptr{0, DCUDA_WIN_HEAP, 0});
        break;
      case misuse::heap_free_inside:
        dcuda_free(gst, dcuda_gptr_add(gst, dcuda_malloc(gst, 1024), 256));
        break;
      case misuse::heap_free_window:
        dcuda_win_free(gst, DCUDA_WIN_HEAP);
        break;
      case misuse::heap_none:  // run with --dcuda-heap-bytes=0
        dcuda_malloc(gst, 8);
        break;
      case misuse::array_bad_distribution:  // one rank too many
        dcuda::array<int>::allocate(gst, DCUDA_COMM_DEVICE,
                                    dcuda::distribution::blocked(100, size + 1));
        break;
      default:  // the window misuses have kernels of their own
        break;
    }
  }
  dcuda_wait_notifications(gst, 2, 1);  // nobody sends tag 2: only the error ends this run
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

// Windows freed, then used: every rank takes part, so the handle really was valid once.
__global__ void use_after_free_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  misuse_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, data->buffer + 64 * rank, 64 * 4, &win);
  dcuda_win_free(gst, win);
  if (rank == 1) dcuda_put(gst, win, 0, 0, 4, data->buffer + 64);
  dcuda_gpu_finish(gst);
}

// Window handles misused: rank 1 frees its window twice, or creates one with a NULL base, or
// puts with a handle kept in device memory from the run before (which made the same window slot:
// without generations that differ per run, the handle would be taken for this run's window).
__global__ void window_misuse_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  misuse_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  int* mine = data->buffer + 64 * rank;
  int* saved_window = data->buffer + 250;
  dcuda_win win;
  if (data->what == misuse::null_window_base) {
    dcuda_win_create(gst, DCUDA_COMM_DEVICE, rank == 1 ? nullptr : mine, 64 * 4, &win);
  } else {
    dcuda_win_create(gst, DCUDA_COMM_DEVICE, mine, 64 * 4, &win);
  }
  if (data->what == misuse::window_from_earlier_run && data->run == 1) {
    if (rank == 1 && threadIdx.x == 0) *saved_window = win;
  } else if (data->what == misuse::window_from_earlier_run && rank == 1) {
    dcuda_put(gst, *saved_window, 0, 0, 4, mine);
  }
  // A get that leaves its target in the rank's access cache, before the window is freed.
  const bool get_then_free =
      data->what == misuse::get_after_free || data->what == misuse::get_win_none_after_free;
  if (get_then_free && rank == 1) dcuda_get(gst, win, 0, 0, 4, mine + 8);
  dcuda_win_free(gst, win);
  if (data->what == misuse::double_win_free && rank == 1) dcuda_win_free(gst, win);
  if (data->what == misuse::get_after_free && rank == 1) dcuda_get(gst, win, 0, 0, 4, mine + 8);
  if (data->what == misuse::get_win_none_after_free && rank == 1) {
    dcuda_get(gst, DCUDA_WIN_NONE, 0, 0, 4, mine + 8);
  }
  if (data->run == 2 || data->what != misuse::window_from_earlier_run) {
    dcuda_wait_notifications(gst, 2, 1);  // nobody sends tag 2: only the error ends this run
  }
  dcuda_gpu_finish(gst);
}

__global__ void state_not_shared_kernel(dcuda_context_handle dcuda) {
  dcuda_state gst;  // the mistake: not __shared__
  dcuda_gpu_init(dcuda, gst);
  dcuda_gpu_finish(gst);
}

// A kernel built against other dcuda headers: its dcuda_gpu_init compares the library's layout
// stamp with another one (these headers' stamp, changed) before anything else.
constexpr std::uint32_t foreign_layout_stamp = dcuda::protocol::context_layout_stamp ^ 0x5a5a5a5au;
__global__ void foreign_headers_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda::device::check_context_layout(dcuda, foreign_layout_stamp);
  dcuda_gpu_init(dcuda, gst);
  dcuda_gpu_finish(gst);
}

__global__ void deadlock_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (rank == 0) dcuda_wait_notifications(gst, 9, 1);  // never sent
  if (rank == 1) {
    if (threadIdx.x == 0) dcuda_wait_notifications_thread(gst, 8, 2);  // never sent either
    __syncthreads();
  }
  dcuda_gpu_finish(gst);
}

void run_misuse(misuse what) {
  int* buffer = nullptr;
  if (cudaMalloc(&buffer, 256 * sizeof(int)) != cudaSuccess) std::exit(3);
  misuse_data data{what, buffer, 1};
  if (what >= misuse::double_win_free) {
    char name[] = "gpu_tests";
    char ranks[] = "--dcuda-ranks-per-device=3";
    char* argv[] = {name, ranks, nullptr};
    dcuda_host_context_handle context = nullptr;
    dcuda_host_init(2, argv, &context, window_misuse_kernel, 64);
    dcuda_host_run(context, &data, sizeof data);
    if (what == misuse::window_from_earlier_run) {
      std::printf("first run ended\n");
      data.run = 2;
      dcuda_host_run(context, &data, sizeof data);
    }
    return;
  }
  std::vector<std::string> arguments{"--dcuda-ranks-per-device=3"};
  if (what == misuse::heap_none) arguments.push_back("--dcuda-heap-bytes=0");
  run_dcuda(what == misuse::window_used_after_free ? use_after_free_kernel : misuse_kernel, 64,
            data, arguments);
}

struct expectation {
  const char* scenario;
  misuse what;
  const char* message;
};

const expectation misuse_cases[] = {
    {"tag_too_large", misuse::tag_too_large, "in dcuda_put_notify: tag 300 is outside 0..255"},
    {"rank_out_of_range", misuse::rank_out_of_range,
     "in dcuda_notify: rank 3 is outside 0..2 of DCUDA_COMM_DEVICE"},
    {"bad_communicator", misuse::bad_communicator,
     "in dcuda_comm_barrier: communicator 7 is neither"},
    {"window_none", misuse::window_none, "in dcuda_put: window handle -1 is not a window"},
    {"window_used_after_free", misuse::window_used_after_free, "in dcuda_put: window handle"},
    {"target_range_outside", misuse::target_range_outside,
     "in dcuda_put: offset 240 + size 32 exceeds the 256-byte window of target rank 0"},
    {"source_outside_window", misuse::source_outside_window, "in dcuda_put: source buffer 0x"},
    {"negative_size", misuse::negative_size, "in dcuda_put: size -8 is negative"},
    {"negative_count", misuse::negative_count, "in dcuda_wait_notifications: count -1 is negative"},
    {"flush_bad_window", misuse::flush_bad_window, "in dcuda_win_flush: window handle"},
    {"one_thread_calls_collective", misuse::one_thread_calls_collective,
     "in dcuda_notify: called by 1 of the rank's 64 threads"},
    {"notify_rank_minus_one", misuse::notify_rank_minus_one,
     "in dcuda_notify: rank -1 is outside 0..2 of DCUDA_COMM_WORLD"},
    {"put_rank_minus_one", misuse::put_rank_minus_one,
     "in dcuda_put: rank -1 is outside 0..2 of DCUDA_COMM_DEVICE"},
    {"offset_int_max", misuse::offset_int_max,
     "in dcuda_put: offset 2147483647 + size 4 exceeds the 256-byte window of target rank 0"},
    {"size_past_int_max", misuse::size_past_int_max,
     "in dcuda_put: offset 8 + size 2147483647 exceeds the 256-byte window of target rank 0"},
    {"negative_offset", misuse::negative_offset,
     "in dcuda_put_notify: offset -4 + size 4 exceeds the 256-byte window of target rank 0"},
    {"negative_tag", misuse::negative_tag, "in dcuda_notify: tag -1 is outside 0..255"},
    {"wait_negative_tag", misuse::wait_negative_tag,
     "in dcuda_wait_notifications: tag -3 is outside 0..255"},
    {"test_negative_count", misuse::test_negative_count,
     "in dcuda_test_notifications: count -2 is negative"},
    {"thread_call_off_thread_zero", misuse::thread_call_off_thread_zero,
     "rank 1 (thread 5) in dcuda_notify_thread: called by thread 5; the thread-scoped calls"},
    {"thread_put_too_large", misuse::thread_put_too_large,
     "in dcuda_put_notify_thread: size 17 is larger than the 16 bytes a thread-scoped put moves"},
    {"thread_put_outside_window", misuse::thread_put_outside_window,
     "in dcuda_put_thread: offset 252 + size 8 exceeds the 256-byte window of target rank 0"},
    {"thread_wait_negative_tag", misuse::thread_wait_negative_tag,
     "in dcuda_wait_notifications_thread: tag -3 is outside 0..255"},
    {"get_outside_window", misuse::get_outside_window,
     "in dcuda_get: offset 250 + size 8 exceeds the 256-byte window of target rank 0"},
    {"get_negative_offset", misuse::get_negative_offset,
     "in dcuda_get: offset -4 + size 4 exceeds the 256-byte window of target rank 0"},
    {"atomic_misaligned", misuse::atomic_misaligned,
     "in dcuda_atomic_fetch_add: the word at offset 6 (address 0x"},
    {"atomic_bad_window", misuse::atomic_bad_window, "in dcuda_atomic_swap: window handle"},
    {"atomic_thread_off_thread_zero", misuse::atomic_thread_off_thread_zero,
     "rank 1 (thread 7) in dcuda_atomic_compare_swap_thread: called by thread 7"},
    {"gptr_add_uneven", misuse::gptr_add_uneven,
     "rank 1 (thread 3) in dcuda_gptr_add: the pointer crosses into rank 2, whose part of window"},
    {"put_gptr_offset_too_large", misuse::put_gptr_offset_too_large,
     "in dcuda_put_gptr: offset 4294967296 + size 4 exceeds the 256-byte window of target rank 0"},
    {"heap_exhausted", misuse::heap_exhausted,
     "rank 1 (thread 0) in dcuda_malloc: 614400 bytes asked for, but the largest free block of "
     "this rank's heap of 1048576 bytes is 524288"},
    {"heap_free_twice", misuse::heap_free_twice,
     "in dcuda_free: no allocation starts at the pointer {rank 1, window"},
    {"heap_free_other_rank", misuse::heap_free_other_rank,
     "in dcuda_free: the pointer {rank 0, window 2147483423, offset 0} names rank 0's heap"},
    {"heap_free_inside", misuse::heap_free_inside,
     "in dcuda_free: the pointer {rank 1, window 2147483423, offset 256} points inside an "
     "allocation"},
    {"heap_free_window", misuse::heap_free_window,
     "in dcuda_win_free: window 2147483423 is the heaps' window"},
    {"heap_none", misuse::heap_none,
     "in dcuda_malloc: no rank has a heap (DCUDA_HEAP_BYTES is 0); 8 bytes were asked for"},
    {"array_bad_distribution", misuse::array_bad_distribution,
     "rank 1 (thread 0) in dcuda::array::allocate: the distribution is for"},
    {"array_index_outside", misuse::array_index_outside,
     "rank 1 (thread 0) in dcuda::array::get: elements [100, 100 + 1) are outside the array of "
     "100 elements"},
    {"double_win_free", misuse::double_win_free, "in dcuda_win_free: window handle"},
    {"get_after_free", misuse::get_after_free, "in dcuda_get: window handle"},
    {"get_win_none_after_free", misuse::get_win_none_after_free,
     "in dcuda_get: window handle -1 is not a window"},
    {"null_window_base", misuse::null_window_base,
     "in dcuda_win_create: the window's base is NULL but its size is 256"},
    {"window_from_earlier_run", misuse::window_from_earlier_run, "in dcuda_put: window handle"},
};

void check_misuse(const char* scenario) {
  require_gpu();
  for (const auto& c : misuse_cases) {
    if (std::string(c.scenario) != scenario) continue;
    const auto start = std::chrono::steady_clock::now();
    const auto child = run_child(std::string("misuse_") + scenario);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (child.exit_code != 1 || !contains(child.output, "dcuda: error: dcuda_host_run: rank 1 (") ||
        !contains(child.output, c.message)) {
      throw dcuda_test::failure("exit " + std::to_string(child.exit_code) + ", output:\n" +
                                child.output);
    }
    DCUDA_CHECK(seconds < 30.0);  // reported at once, not by the watchdog
    // The handle of the run before was valid in its run (the first run ended without an error).
    if (c.what == misuse::window_from_earlier_run) {
      DCUDA_CHECK(contains(child.output, "first run ended"));
    }
    return;
  }
  throw dcuda_test::failure(std::string("no misuse case ") + scenario);
}

}  // namespace

#define MISUSE_CASE(name)                   \
  DCUDA_CHILD(misuse_##name) {              \
    run_misuse(misuse::name);               \
  }                                         \
  DCUDA_TEST(misuse_##name##_is_reported) { \
    check_misuse(#name);                    \
  }

MISUSE_CASE(tag_too_large)
MISUSE_CASE(rank_out_of_range)
MISUSE_CASE(bad_communicator)
MISUSE_CASE(window_none)
MISUSE_CASE(window_used_after_free)
MISUSE_CASE(target_range_outside)
MISUSE_CASE(source_outside_window)
MISUSE_CASE(negative_size)
MISUSE_CASE(negative_count)
MISUSE_CASE(one_thread_calls_collective)
MISUSE_CASE(flush_bad_window)
MISUSE_CASE(notify_rank_minus_one)
MISUSE_CASE(put_rank_minus_one)
MISUSE_CASE(offset_int_max)
MISUSE_CASE(size_past_int_max)
MISUSE_CASE(negative_offset)
MISUSE_CASE(negative_tag)
MISUSE_CASE(wait_negative_tag)
MISUSE_CASE(test_negative_count)
MISUSE_CASE(thread_call_off_thread_zero)
MISUSE_CASE(thread_put_too_large)
MISUSE_CASE(thread_put_outside_window)
MISUSE_CASE(thread_wait_negative_tag)
MISUSE_CASE(get_outside_window)
MISUSE_CASE(get_negative_offset)
MISUSE_CASE(atomic_misaligned)
MISUSE_CASE(atomic_bad_window)
MISUSE_CASE(atomic_thread_off_thread_zero)
MISUSE_CASE(gptr_add_uneven)
MISUSE_CASE(put_gptr_offset_too_large)
MISUSE_CASE(heap_exhausted)
MISUSE_CASE(heap_free_twice)
MISUSE_CASE(heap_free_other_rank)
MISUSE_CASE(heap_free_inside)
MISUSE_CASE(heap_free_window)
MISUSE_CASE(heap_none)
MISUSE_CASE(array_bad_distribution)
MISUSE_CASE(array_index_outside)
MISUSE_CASE(double_win_free)
MISUSE_CASE(get_after_free)
MISUSE_CASE(get_win_none_after_free)
MISUSE_CASE(null_window_base)
MISUSE_CASE(window_from_earlier_run)

DCUDA_CHILD(state_not_shared) {
  int unused = 0;
  run_dcuda(state_not_shared_kernel, 32, unused, {"--dcuda-ranks-per-device=1"});
}

DCUDA_TEST(dcuda_state_outside_shared_memory_is_reported) {
  require_gpu();
  const auto child = run_child("state_not_shared");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "in dcuda_gpu_init: the dcuda_state at 0x"));
  DCUDA_CHECK(contains(child.output, "is not in shared memory"));
}

DCUDA_CHILD(foreign_headers) {
  int unused = 0;
  run_dcuda(foreign_headers_kernel, 64, unused, {"--dcuda-ranks-per-device=4"});
}

std::string hex(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", value);
  return text;
}

DCUDA_TEST(a_kernel_built_against_other_headers_is_stopped_and_named) {
  require_gpu();
  const auto child = run_child("foreign_headers");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "compiled against the headers of another dcuda build"));
  DCUDA_CHECK(contains(child.output, "(layout " + hex(foreign_layout_stamp) + "; this library's " +
                                         hex(dcuda::protocol::context_layout_stamp) + ")"));
}

DCUDA_CHILD(deadlock) {
  int unused = 0;
  run_dcuda(deadlock_kernel, 64, unused, {"--dcuda-ranks-per-device=4"});
}

// SIGTERM in the middle of a run (a deadlock the watchdog is told never to end): the run stops,
// the process is named, and the job ends within 10 s of the signal. The signal goes once the
// child has launched its kernel (DCUDA_DEBUG=TRACE says so), and a second later: the handlers
// exist only while dcuda_host_run runs.
DCUDA_TEST(sigterm_during_a_run_stops_it_and_names_the_process) {
  require_gpu();
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) {
    throw dcuda_test::failure("readlink(/proc/self/exe) failed");
  }
  const std::string script =
      std::string("log=$(mktemp); DCUDA_DEBUG=TRACE DCUDA_WAIT_TIMEOUT=0 '") + self +
      "' --child deadlock > $log 2>&1 & pid=$!; "
      "for i in $(seq 600); do grep -q 'launching the kernel' $log && break; sleep 0.1; done; "
      "sleep 1; start=$(date +%s%N); kill -TERM $pid; wait $pid; status=$?; end=$(date +%s%N); "
      "cat $log; rm -f $log; echo \"ended $(( (end - start) / 1000000 )) ms after the signal\"; "
      "exit $status";
  const auto child = gpu_test::run_command(script);  // popen's sh runs it
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "received SIGTERM; the run was stopped"));
  const auto at = child.output.find("ended ");
  DCUDA_CHECK(at != std::string::npos);
  const long milliseconds = std::atol(child.output.c_str() + at + 6);
  DCUDA_CHECK(milliseconds < 10000);
}

DCUDA_TEST(watchdog_names_every_waiting_rank_of_a_deadlock) {
  require_gpu();
  const auto start = std::chrono::steady_clock::now();
  const auto child = run_child("deadlock", "DCUDA_WAIT_TIMEOUT=1");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (child.exit_code != 1 ||
      !contains(child.output, "no progress for 1 s (DCUDA_WAIT_TIMEOUT): every rank waits") ||
      !contains(child.output,
                "rank 0: dcuda_wait_notifications(tag 9, count 1): 0 of 1 notifications arrived") ||
      !contains(child.output,
                "rank 1: dcuda_wait_notifications_thread(tag 8, count 2): 0 of 2 "
                "notifications arrived") ||
      !contains(child.output,
                "ranks 2-3: dcuda_gpu_finish: barrier 2 of DCUDA_COMM_DEVICE, 2 of 4 ranks")) {
    throw dcuda_test::failure("exit " + std::to_string(child.exit_code) + ", output:\n" +
                              child.output);
  }
  DCUDA_CHECK(seconds < 20.0);
}

DCUDA_CHILD(bad_threads_per_rank) {
  int unused = 0;
  run_dcuda(deadlock_kernel, 0, unused);
}

// Declared for 256 threads per block: a rank of 1024 cannot start (the usual cause is a kernel
// declared without __launch_bounds__ whose registers do not fit 1024 threads).
__global__ void __launch_bounds__(256) kernel_for_256_threads(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  dcuda_gpu_finish(gst);
}

DCUDA_CHILD(kernel_too_large_for_rank) {
  int unused = 0;
  run_dcuda(kernel_for_256_threads, 1024, unused);
}

DCUDA_CHILD(null_user_data) {
  dcuda_host_context_handle context = nullptr;
  dcuda_host_init(0, nullptr, &context, deadlock_kernel, 32);
  dcuda_host_run(context, nullptr, 16);
}

DCUDA_CHILD(share_host_memory) {
  dcuda_host_context_handle context = nullptr;
  dcuda_host_init(0, nullptr, &context, deadlock_kernel, 32);
  static int not_device_memory = 0;
  dcuda_host_share_memory(context, &not_device_memory);
}

DCUDA_CHILD(free_shared_memory) {
  dcuda_host_context_handle context = nullptr;
  dcuda_host_init(0, nullptr, &context, deadlock_kernel, 32);
  void* memory = nullptr;
  if (cudaMalloc(&memory, 4096) != cudaSuccess) return;
  dcuda_host_share_memory(context, static_cast<char*>(memory) + 100);
  cudaFree(memory);
  int unused = 0;
  dcuda_host_run(context, &unused, sizeof unused);  // must refuse: the shared memory is gone
  std::printf("run started\n");
}

// Handles of contexts that dcuda_host_finish ended, and one dcuda_host_init never made.
DCUDA_CHILD(run_after_finish) {
  dcuda_host_context_handle first = nullptr;
  dcuda_host_init(0, nullptr, &first, kernel_for_256_threads, 64);
  dcuda_host_finish(first);
  dcuda_host_context_handle second = nullptr;  // made after the first ended: not at its address
  dcuda_host_init(0, nullptr, &second, kernel_for_256_threads, 64);
  dcuda_host_run(second);
  std::printf("second context ran, %s\n", second == first ? "same handle" : "new handle");
  dcuda_host_run(first);
}

DCUDA_CHILD(finish_twice) {
  dcuda_host_context_handle context = nullptr;
  dcuda_host_init(0, nullptr, &context, kernel_for_256_threads, 64);
  dcuda_host_finish(context);
  dcuda_host_finish(context);
}

DCUDA_CHILD(handle_never_made) {
  int not_a_context = 0;
  dcuda_host_run(reinterpret_cast<dcuda_host_context_handle>(&not_a_context));
}

DCUDA_CHILD(bad_setting) {
  int unused = 0;
  run_dcuda(deadlock_kernel, 32, unused);
}

DCUDA_TEST(host_side_misuse_is_reported) {
  require_gpu();
  auto child = run_child("bad_threads_per_rank");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output,
                       "dcuda: error: dcuda_host_init: threads_per_rank 0 is outside 1..1024"));
  child = run_child("kernel_too_large_for_rank");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output,
                       "dcuda: error: dcuda_host_init: the kernel cannot run even one rank of 1024 "
                       "threads on a multiprocessor: it can run at most 256 threads per block"));
  DCUDA_CHECK(contains(child.output, "declare it __launch_bounds__(1024)"));
  child = run_child("null_user_data");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(
      contains(child.output, "dcuda: error: dcuda_host_run: gpu_data is NULL but gpu_size is 16"));
  child = run_child("share_host_memory");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "dcuda: error: dcuda_host_share_memory: pointer 0x"));
  DCUDA_CHECK(contains(child.output, "is not inside a cudaMalloc allocation"));
  child = run_child("free_shared_memory");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "dcuda: error: dcuda_host_run: the allocation at 0x"));
  DCUDA_CHECK(
      contains(child.output, "(4096 bytes) that dcuda_host_share_memory shared has been freed"));
  DCUDA_CHECK(!contains(child.output, "run started"));
  child = run_child("run_after_finish");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "second context ran, new handle"));
  DCUDA_CHECK(contains(
      child.output,
      "dcuda: error: dcuda_host_run: the context was passed to dcuda_host_finish already"));
  child = run_child("finish_twice");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(
      child.output,
      "dcuda: error: dcuda_host_finish: the context was passed to dcuda_host_finish already"));
  child = run_child("handle_never_made");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(
      contains(child.output,
               "dcuda: error: dcuda_host_run: the context handle is not one dcuda_host_init made"));
  child = run_child("bad_setting", "DCUDA_RANKS_PER_DEVICE=lots");
  DCUDA_CHECK_EQ(child.exit_code, 1);
  DCUDA_CHECK(contains(child.output, "DCUDA_RANKS_PER_DEVICE"));
  DCUDA_CHECK(contains(child.output, "'lots'"));
}
