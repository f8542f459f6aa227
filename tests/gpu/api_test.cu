// Semantics of every device call on one GPU: what arrives, how often, in which order.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::device_buffer;
using gpu_test::require_gpu;
using gpu_test::run_dcuda;

namespace {

// ---------------------------------------------------------------------------------------------
struct identity_data {
  int* values;  // [ranks][6]
};

__global__ void identity_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  identity_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int world_size, world_rank, device_size, device_rank;
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &world_size);
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &device_size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  if (threadIdx.x == blockDim.x - 1) {  // any thread may ask
    int* mine = data->values + 6 * blockIdx.x;
    mine[0] = world_size;
    mine[1] = world_rank;
    mine[2] = device_size;
    mine[3] = device_rank;
    mine[4] = static_cast<int>(blockDim.x);
    mine[5] = static_cast<int>(gridDim.x);
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(rank_info_and_communicators_describe_the_launch) {
  require_gpu();
  const int threads = 96;
  const int expected = gpu_test::resident_ranks(identity_kernel, threads);
  device_buffer<int> values(static_cast<std::size_t>(expected) * 6, 0xff);
  identity_data data{values.data};
  const auto result = run_dcuda(identity_kernel, threads, data);
  const dcuda_rank_info& info = result.info;
  DCUDA_CHECK_EQ(info.rank_count, expected);
  DCUDA_CHECK_EQ(info.rank_responsible, expected);
  DCUDA_CHECK_EQ(info.rank_start, 0);
  DCUDA_CHECK_EQ(info.device_count, 1);
  DCUDA_CHECK_EQ(info.device_index, 0);
  DCUDA_CHECK_EQ(info.node_count, 1);
  DCUDA_CHECK_EQ(info.node_index, 0);
  DCUDA_CHECK_EQ(info.process_count, 1);
  DCUDA_CHECK_EQ(info.process_index, 0);
  DCUDA_CHECK(result.milliseconds > 0.0);
  const auto host = values.read();
  for (int r = 0; r < expected; ++r) {
    const int* v = host.data() + 6 * r;
    DCUDA_CHECK_EQ(v[0], expected);
    DCUDA_CHECK_EQ(v[1], r);
    DCUDA_CHECK_EQ(v[2], expected);
    DCUDA_CHECK_EQ(v[3], r);
    DCUDA_CHECK_EQ(v[4], threads);
    DCUDA_CHECK_EQ(v[5], expected);
  }
}

DCUDA_TEST(ranks_setting_caps_the_rank_count) {
  require_gpu();
  device_buffer<int> values(7 * 6, 0xff);
  identity_data data{values.data};
  const auto result = run_dcuda(identity_kernel, 64, data, {"--dcuda-ranks-per-device=7"});
  DCUDA_CHECK_EQ(result.info.rank_count, 7);
  DCUDA_CHECK_EQ(values.read()[6 * 6 + 5], 7);  // gridDim.x seen by the last rank
}

namespace {

// ---------------------------------------------------------------------------------------------
// Every rank sends an odd-sized, oddly aligned block to its right neighbour with put_notify.
struct ring_data {
  unsigned char* windows;  // [ranks][window_bytes]
  int window_bytes;
  int* errors;
};

__device__ int ring_message_size(int rank) {
  return 1000 + 37 * (rank % 11);
}
__device__ unsigned char ring_byte(int sender, int i) {
  return static_cast<unsigned char>(sender * 31 + i * 7 + 1);
}

__global__ void ring_put_notify_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  ring_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  unsigned char* mine = data->windows + static_cast<size_t>(rank) * data->window_bytes;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, mine, data->window_bytes, &win);

  // Source at offset 3 of my window, destination at offset 5 + rank%4 of the target's.
  const int bytes = ring_message_size(rank);
  for (int i = threadIdx.x; i < bytes; i += blockDim.x) mine[3 + i] = ring_byte(rank, i);
  const int target = (rank + 1) % size;
  const int offset = 2048 + 5 + rank % 4;
  dcuda_put_notify(gst, win, target, offset, bytes, mine + 3, 5);
  dcuda_wait_notifications(gst, 5, 1);

  const int sender = (rank + size - 1) % size;
  const int received = ring_message_size(sender);
  const unsigned char* at = mine + 2048 + 5 + sender % 4;
  for (int i = threadIdx.x; i < received; i += blockDim.x) {
    if (at[i] != ring_byte(sender, i)) atomicAdd(data->errors, 1);
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(put_notify_delivers_every_byte_around_the_ring) {
  require_gpu();
  const int threads = 128;
  const int ranks = gpu_test::resident_ranks(ring_put_notify_kernel, threads);
  const int window = 4096;
  device_buffer<unsigned char> windows(static_cast<std::size_t>(ranks) * window);
  device_buffer<int> errors(1);
  ring_data data{windows.data, window, errors.data};
  run_dcuda(ring_put_notify_kernel, threads, data);
  DCUDA_CHECK_EQ(errors.read()[0], 0);
  // Bytes outside the received range were not touched.
  const auto host = windows.read();
  for (int r = 0; r < ranks; ++r) {
    const int sender = (r + ranks - 1) % ranks;
    const std::size_t base = static_cast<std::size_t>(r) * window;
    DCUDA_CHECK_EQ(static_cast<int>(host[base + 2048 + 4 + sender % 4]), 0);
    const int size = 1000 + 37 * (sender % 11);
    DCUDA_CHECK_EQ(static_cast<int>(host[base + 2048 + 5 + sender % 4 + size]), 0);
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// Puts to one target, then one notify: the notify is observed after all puts' data.
struct order_data {
  unsigned* window;  // rank 1's window: slots for 200 puts + the overwritten counter
  int* errors;
};

__global__ void put_then_notify_order_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  order_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_win win;
  // Rank 0 exposes the upper half of the buffer (its source), rank 1 the lower half (target).
  unsigned* base = rank == 0 ? data->window + 4096 : data->window;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, rank < 2 ? base : nullptr, rank < 2 ? 4096 * 4 : 0,
                   &win);
  if (rank == 0) {
    for (int i = 0; i < 200; ++i) {
      if (threadIdx.x < 16) base[threadIdx.x] = 1000u * i + threadIdx.x;  // reuse the source
      dcuda_put(gst, win, 1, i * 64, 64, base);  // complete on return: reuse is safe
    }
    dcuda_notify(gst, 1, DCUDA_COMM_DEVICE, 9);
    // In-order put_notify to one location: the target must never see an older value after a
    // newer notification.
    for (unsigned i = 1; i <= 2000; ++i) {
      if (threadIdx.x == 0) base[0] = i;
      dcuda_put_notify(gst, win, 1, 4000 * 4, 4, base, 10);
    }
  } else if (rank == 1) {
    dcuda_wait_notifications(gst, 9, 1);
    for (int i = threadIdx.x; i < 200 * 16; i += blockDim.x) {
      const int put = i / 16, word = i % 16;
      if (base[put * 16 + word] != 1000u * put + word) atomicAdd(data->errors, 1);
    }
    unsigned last = 0;
    for (unsigned i = 1; i <= 2000; ++i) {
      dcuda_wait_notifications(gst, 10, 1);
      const unsigned seen = *reinterpret_cast<volatile unsigned*>(&base[4000]);
      if (threadIdx.x == 0 && (seen < i || seen < last)) atomicAdd(data->errors, 1);
      last = seen;
    }
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(puts_and_notifies_to_one_target_arrive_in_issue_order) {
  require_gpu();
  device_buffer<unsigned> window(8192);
  device_buffer<int> errors(1);
  order_data data{window.data, errors.data};
  run_dcuda(put_then_notify_order_kernel, 128, data, {"--dcuda-ranks-per-device=4"});
  DCUDA_CHECK_EQ(errors.read()[0], 0);
  DCUDA_CHECK_EQ(window.read()[4000], 2000u);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Overlapping windows: all ranks expose the same buffer; a put whose source is the destination
// copies nothing and still notifies.
struct overlap_data {
  int* shared_buffer;  // [ranks]
  int* errors;
};

__global__ void overlapping_windows_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  overlap_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, data->shared_buffer, size * 4, &win);
  if (threadIdx.x == 0) data->shared_buffer[rank] = rank * 3 + 1;
  const int target = (rank + 1) % size;
  // Same address as source and destination: the value is "sent" in place.
  dcuda_put_notify(gst, win, target, rank * 4, 4, &data->shared_buffer[rank], 1);
  dcuda_wait_notifications(gst, 1, 1);
  const int sender = (rank + size - 1) % size;
  if (threadIdx.x == 0 && data->shared_buffer[sender] != sender * 3 + 1) atomicAdd(data->errors, 1);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(overlapping_windows_deliver_in_place) {
  require_gpu();
  const int ranks = gpu_test::resident_ranks(overlapping_windows_kernel, 64);
  device_buffer<int> buffer(static_cast<std::size_t>(ranks));
  device_buffer<int> errors(1);
  overlap_data data{buffer.data, errors.data};
  run_dcuda(overlapping_windows_kernel, 64, data);
  DCUDA_CHECK_EQ(errors.read()[0], 0);
  const auto host = buffer.read();
  for (int r = 0; r < ranks; ++r) DCUDA_CHECK_EQ(host[r], r * 3 + 1);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Puts that change window, target and size from one to the next: each misses the route cache
// that thread 0 fills before the entry barrier (plan_put), and each copies a source that every
// thread rewrote just before the call. Rank r sends to r+1 (tag 1) and r+2 (tag 2), alternating
// a DCUDA_COMM_WORLD and a DCUDA_COMM_DEVICE window, with sizes for every path: one thread's
// store, the small-put limit, and block copies of odd length and alignment.
constexpr int switching_rounds = 32;
constexpr int switching_slot = 4096;  // destination bytes per (relation, round)
// The destinations, then the source: a slot and the 4 bytes by which its start moves.
constexpr int switching_window = 2 * switching_rounds * switching_slot + switching_slot + 4;

struct switching_data {
  unsigned char* windows;  // [ranks][2][switching_window]: destinations, then the source
  int* errors;
};

// Round k goes to r+1 or r+2 (the relation), in window k % 2; each relation gets every size.
__host__ __device__ int switching_size(int round) {
  constexpr int sizes[4] = {4, 16, 3001, 4093};
  return sizes[(round + round / 4) % 4];
}
__host__ __device__ int switching_relation(int round) {
  return 1 + (round / 2) % 2;
}
__host__ __device__ int switching_offset(int relation, int round) {
  return ((relation - 1) * switching_rounds + round) * switching_slot + round % 3;
}
__host__ __device__ unsigned char switching_byte(int sender, int round, int i) {
  return static_cast<unsigned char>(sender * 13 + round * 29 + i * 7 + 1);
}

__global__ void __launch_bounds__(1024) switching_puts_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  switching_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  unsigned char* mine[2];
  dcuda_win wins[2];
  for (int w = 0; w < 2; ++w) {
    mine[w] = data->windows + (2 * static_cast<std::size_t>(rank) + w) * switching_window;
    dcuda_win_create(gst, w == 0 ? DCUDA_COMM_WORLD : DCUDA_COMM_DEVICE, mine[w], switching_window,
                     &wins[w]);
  }
  constexpr int source_at = 2 * switching_rounds * switching_slot;
  for (int round = 0; round < switching_rounds; ++round) {
    const int w = round % 2;
    const int relation = switching_relation(round);
    const int bytes = switching_size(round);
    // Source at an odd offset in some rounds, so head, vectors and tail all occur.
    unsigned char* source = mine[w] + source_at + round % 5;
    for (int i = threadIdx.x; i < bytes; i += blockDim.x) {
      source[i] = switching_byte(rank, round, i);
    }
    // One process: the device rank of the target is its world rank.
    dcuda_put_notify(gst, wins[w], (rank + relation) % size, switching_offset(relation, round),
                     bytes, source, relation);
  }
  dcuda_wait_notifications(gst, 1, switching_rounds / 2);
  dcuda_wait_notifications(gst, 2, switching_rounds / 2);
  for (int round = 0; round < switching_rounds; ++round) {
    const int relation = switching_relation(round);
    const int sender = (rank + size - relation % size) % size;
    const unsigned char* at = mine[round % 2] + switching_offset(relation, round);
    const int bytes = switching_size(round);
    for (int i = threadIdx.x; i < bytes; i += blockDim.x) {
      if (at[i] != switching_byte(sender, round, i)) atomicAdd(data->errors, 1);
    }
    if (threadIdx.x == 0 && at[bytes] != 0) atomicAdd(data->errors, 1);  // nothing beyond
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_win_free(gst, wins[1]);
  dcuda_win_free(gst, wins[0]);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(puts_switching_window_target_and_size_land_where_each_one_says) {
  require_gpu();
  for (const int threads : {64, 1024}) {
    // Many ranks, but not the thousands of 64-thread ones a GPU holds (the sanitizers run this).
    const int ranks = std::min(gpu_test::resident_ranks(switching_puts_kernel, threads), 264);
    device_buffer<unsigned char> windows(2 * static_cast<std::size_t>(ranks) * switching_window);
    device_buffer<int> errors(1);
    switching_data data{windows.data, errors.data};
    run_dcuda(switching_puts_kernel, threads, data,
              {"--dcuda-ranks-per-device=" + std::to_string(ranks)});
    DCUDA_CHECK_EQ(errors.read()[0], 0);
    // Every rank's destinations hold exactly the bytes of its 32 puts (16 from each sender), and
    // nothing else: the nonzero bytes of the expected patterns, counted here, are all there are.
    const auto host = windows.read();
    std::size_t written = 0;
    for (std::size_t at = 0; at < host.size(); ++at) {
      if (at % switching_window < 2u * switching_rounds * switching_slot && host[at] != 0) {
        ++written;
      }
    }
    std::size_t expected = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      for (int round = 0; round < switching_rounds; ++round) {
        const int sender = (rank + ranks - switching_relation(round) % ranks) % ranks;
        for (int i = 0; i < switching_size(round); ++i) {
          expected += switching_byte(sender, round, i) != 0 ? 1u : 0u;
        }
      }
    }
    DCUDA_CHECK_EQ(written, expected);
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// test consumes only when enough notifications are there; wait blocks until they are.
struct test_wait_data {
  int* results;  // what rank 1 observed, in order
};

__global__ void test_versus_wait_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  test_wait_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  int* out = data->results;
  if (rank == 1) {
    const int nothing_yet = dcuda_test_notifications(gst, 200, 1);
    if (threadIdx.x == 0) out[0] = nothing_yet;
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  if (rank == 0) {
    for (int i = 0; i < 3; ++i) dcuda_notify(gst, 1, DCUDA_COMM_WORLD, 200);
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  if (rank == 1) {
    const int four = dcuda_test_notifications(gst, 200, 4);  // only 3 there: 0, none consumed
    const int other_tag = dcuda_test_notifications(gst, 201, 1);
    dcuda_wait_notifications(gst, 200, 3);                         // all 3 still there
    const int after = dcuda_test_notifications(gst, 200, 1);       // consumed: 0
    const int zero_count = dcuda_test_notifications(gst, 200, 0);  // nothing needed: 1
    if (threadIdx.x == 0) {
      out[1] = four;
      out[2] = other_tag;
      out[3] = after;
      out[4] = zero_count;
    }
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  if (rank == 0) dcuda_notify(gst, 1, DCUDA_COMM_DEVICE, 200);
  if (rank == 1) {
    // Every thread of the rank sees the same result, so the loop ends for all of them together.
    while (dcuda_test_notifications(gst, 200, 1) == 0) {
    }
    if (threadIdx.x == 0) out[5] = 1;
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(test_notifications_consumes_only_when_enough_are_there) {
  require_gpu();
  device_buffer<int> results(6, 0x7f);
  test_wait_data data{results.data};
  run_dcuda(test_versus_wait_kernel, 128, data, {"--dcuda-ranks-per-device=2"});
  const auto r = results.read();
  DCUDA_CHECK_EQ(r[0], 0);
  DCUDA_CHECK_EQ(r[1], 0);
  DCUDA_CHECK_EQ(r[2], 0);
  DCUDA_CHECK_EQ(r[3], 0);
  DCUDA_CHECK_EQ(r[4], 1);
  DCUDA_CHECK_EQ(r[5], 1);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Barrier: no rank leaves round k before every rank has entered it.
struct barrier_data {
  unsigned* arrivals;
  int* errors;
};

__global__ void barrier_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  barrier_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int size;
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  for (unsigned round = 1; round <= 50; ++round) {
    if (threadIdx.x == 0) atomicAdd(data->arrivals, 1u);
    dcuda_comm_barrier(gst, round % 2 ? DCUDA_COMM_DEVICE : DCUDA_COMM_WORLD);
    if (threadIdx.x == 0) {
      const unsigned seen = atomicAdd(data->arrivals, 0u);
      if (seen < round * static_cast<unsigned>(size)) atomicAdd(data->errors, 1);
    }
    dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // nobody starts round+1 before all checked
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(barrier_releases_no_rank_early) {
  require_gpu();
  device_buffer<unsigned> arrivals(1);
  device_buffer<int> errors(1);
  barrier_data data{arrivals.data, errors.data};
  const auto result = run_dcuda(barrier_kernel, 256, data);
  DCUDA_CHECK_EQ(errors.read()[0], 0);
  DCUDA_CHECK_EQ(arrivals.read()[0], 50u * static_cast<unsigned>(result.info.rank_count));
}

namespace {

// ---------------------------------------------------------------------------------------------
// The largest rank count: 32-thread ranks at full occupancy, notify ring plus barrier.
struct many_data {
  int* received;
};

__global__ void many_ranks_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  many_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  for (int round = 0; round < 10; ++round) {
    dcuda_notify(gst, (rank + 1 + round) % size, DCUDA_COMM_WORLD, round);
  }
  for (int round = 0; round < 10; ++round) dcuda_wait_notifications(gst, round, 1);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  if (threadIdx.x == 0) data->received[rank] = 10;
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(largest_rank_count_the_gpu_allows_runs) {
  require_gpu();
  const int ranks = gpu_test::resident_ranks(many_ranks_kernel, 32);
  device_buffer<int> received(static_cast<std::size_t>(ranks));
  many_data data{received.data};
  const auto result = run_dcuda(many_ranks_kernel, 32, data);
  DCUDA_CHECK_EQ(result.info.rank_count, ranks);
  std::printf("  %d ranks of 32 threads\n", ranks);
  const auto host = received.read();
  DCUDA_CHECK_EQ(std::count(host.begin(), host.end(), 10), static_cast<long>(ranks));
}

namespace {

// ---------------------------------------------------------------------------------------------
// CPU timers: two timed regions of known length.
__device__ void spin_for_ns(unsigned long long ns) {
  const unsigned long long start = dcuda::device::global_time_ns();
  while (dcuda::device::global_time_ns() - start < ns) {
  }
}

struct timer_data {
  int unused;
};

__global__ void timer_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  dcuda_start_cpu_timer(gst);
  spin_for_ns(20000000ull);  // 20 ms
  dcuda_stop_cpu_timer(gst);
  dcuda_start_cpu_timer(gst);
  spin_for_ns(5000000ull);  // 5 ms
  dcuda_stop_cpu_timer(gst);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(cpu_timers_measure_each_timed_region) {
  require_gpu();
  timer_data data{};
  const auto result = run_dcuda(timer_kernel, 128, data);
  std::printf("  timings %.3f ms and %.3f ms; kernel %.3f ms\n", result.timings.at(0),
              result.timings.at(1), result.milliseconds);
  DCUDA_CHECK_EQ(result.timings.size(), 2u);
  // The host stamps each message when its proxy takes it, so queueing behind many ranks' messages
  // can move either end of a measurement; the bounds leave room for that.
  DCUDA_CHECK(result.timings[0] >= 19.0 && result.timings[0] < 200.0);
  DCUDA_CHECK(result.timings[1] >= 4.0 && result.timings[1] < 100.0);
  DCUDA_CHECK(result.milliseconds >= 24.9);
}

namespace {

// ---------------------------------------------------------------------------------------------
// dcuda_host_run again on the same context: user data goes in and comes back each time, and
// notification counters start from zero.
struct rerun_data {
  int input;
  int output;
};

__global__ void rerun_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  rerun_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  dcuda_notify(gst, (rank + 1) % size, DCUDA_COMM_DEVICE, 3);
  dcuda_wait_notifications(gst, 3, 1);
  // A second run that inherited counts would find this one too early.
  const int extra = dcuda_test_notifications(gst, 3, 1);
  if (rank == 0 && threadIdx.x == 0) data->output = data->input * 2 + extra;
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(host_run_can_be_called_again) {
  require_gpu();
  dcuda_host_context_handle context = nullptr;
  dcuda_host_init(0, nullptr, &context, rerun_kernel, 64);
  for (int run = 1; run <= 3; ++run) {
    rerun_data data{run * 10, -1};
    const double ms = dcuda_host_run(context, &data, sizeof data);
    DCUDA_CHECK(ms > 0.0);
    DCUDA_CHECK_EQ(data.output, run * 20);
  }
  dcuda_host_finish(context);
}

namespace {

// ---------------------------------------------------------------------------------------------
// 31 windows at once succeed (the 32nd slot holds the heaps), the 32nd is DCUDA_WIN_NONE; freeing
// one makes room again.
struct window_count_data {
  int* buffer;
  int created;
  int none_returned;
  int reused;
};

__global__ void window_slots_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  window_count_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_win windows[31];
  int created = 0;
  for (int i = 0; i < 31; ++i) {
    dcuda_win_create(gst, DCUDA_COMM_DEVICE, data->buffer + i, 4, &windows[i]);
    created += windows[i] != DCUDA_WIN_NONE;
  }
  dcuda_win extra;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, data->buffer, 4, &extra);
  dcuda_win_free(gst, windows[7]);
  dcuda_win again;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, data->buffer, 4, &again);
  // The new window in slot 7 works, and the old handle of slot 7 does not alias it.
  dcuda_put_notify(gst, again, (rank + 1) % 2, 0, 4, data->buffer, 4);
  dcuda_wait_notifications(gst, 4, 1);
  if (rank == 0 && threadIdx.x == 0) {
    data->created = created;
    data->none_returned = extra == DCUDA_WIN_NONE;
    data->reused = again != DCUDA_WIN_NONE && again != windows[7];
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(window_slots_run_out_at_31_and_are_reused) {
  require_gpu();
  device_buffer<int> buffer(64);
  window_count_data data{buffer.data, 0, 0, 0};
  run_dcuda(window_slots_kernel, 64, data, {"--dcuda-ranks-per-device=2"});
  DCUDA_CHECK_EQ(data.created, 31);
  DCUDA_CHECK_EQ(data.none_returned, 1);
  DCUDA_CHECK_EQ(data.reused, 1);
}

namespace {

// ---------------------------------------------------------------------------------------------
// What a rank writes with plain stores before a barrier, every rank reads with plain loads after
// it, even lines it already holds in its L1 from the previous round.
struct publish_data {
  int* slots;  // [ranks]
  int* errors;
};

__global__ void barrier_publishes_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  publish_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  for (int round = 1; round <= 200; ++round) {
    if (threadIdx.x == 0) data->slots[rank] = round;
    dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
    for (int r = threadIdx.x; r < size; r += blockDim.x) {
      if (data->slots[r] != round) atomicAdd(data->errors, 1);
    }
    dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // all reads of this round before the next writes
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(barrier_makes_plain_writes_visible) {
  require_gpu();
  const int ranks = gpu_test::resident_ranks(barrier_publishes_kernel, 128);
  device_buffer<int> slots(static_cast<std::size_t>(ranks));
  device_buffer<int> errors(1);
  publish_data data{slots.data, errors.data};
  run_dcuda(barrier_publishes_kernel, 128, data);
  DCUDA_CHECK_EQ(errors.read()[0], 0);
}

namespace {

// ---------------------------------------------------------------------------------------------
// After dcuda_win_flush the source may be overwritten: what the target receives is what was put.
struct flush_data {
  int* windows;  // [ranks][64]
  int* errors;
};

__global__ void flush_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  flush_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  int* mine = data->windows + 64 * rank;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, mine, 64 * 4, &win);
  const int target = (rank + 1) % size;
  for (int round = 0; round < 20; ++round) {
    if (threadIdx.x < 32) mine[threadIdx.x] = rank * 1000 + round;
    dcuda_put(gst, win, target, 32 * 4, 32 * 4, mine);
    dcuda_win_flush(gst, win);
    if (threadIdx.x < 32) mine[threadIdx.x] = -1;  // the source is free again
    dcuda_notify(gst, target, DCUDA_COMM_DEVICE, 6);
    dcuda_wait_notifications(gst, 6, 1);
    const int sender = (rank + size - 1) % size;
    if (threadIdx.x < 32 && mine[32 + threadIdx.x] != sender * 1000 + round) {
      atomicAdd(data->errors, 1);
    }
    dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // the next round's put may overwrite
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

// Every rank asks the host many times: answers reach the rank that asked, in order.
struct ping_data {
  int* pings_done;  // [ranks]
};

__global__ void ping_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  ping_data* data;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  for (int i = 0; i < 50; ++i) dcuda_ping_host(gst);
  if (threadIdx.x == 0) data->pings_done[rank] = 50;
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(win_flush_makes_the_source_reusable) {
  require_gpu();
  const int ranks = gpu_test::resident_ranks(flush_kernel, 64);
  device_buffer<int> windows(static_cast<std::size_t>(ranks) * 64);
  device_buffer<int> errors(1);
  flush_data data{windows.data, errors.data};
  run_dcuda(flush_kernel, 64, data);
  DCUDA_CHECK_EQ(errors.read()[0], 0);
}

DCUDA_TEST(ping_host_answers_every_rank) {
  require_gpu();
  const int ranks = gpu_test::resident_ranks(ping_kernel, 128);
  device_buffer<int> done(static_cast<std::size_t>(ranks));
  ping_data data{done.data};
  run_dcuda(ping_kernel, 128, data);
  const auto host = done.read();
  DCUDA_CHECK_EQ(std::count(host.begin(), host.end(), 50), static_cast<long>(ranks));
}
