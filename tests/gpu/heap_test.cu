// The rank heaps on one GPU: dcuda_malloc's blocks (sizes, alignment, no overlap, local
// addresses); put_notify, get and the atomics on other ranks' blocks through the pointers they
// published; freeing and coalescing back to the whole segment; team-aligned allocation with
// dcuda_win_allocate (pointers stepping across ranks, the memory given back by dcuda_win_free,
// by a failed allocation when no window slot is free, and by dcuda_gpu_finish for a window left
// open); and a block that lives from one run of a host context into the next.
#include <cstdint>
#include <string>
#include <vector>

#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::device_buffer;
using gpu_test::require_gpu;

namespace {

constexpr int ranks = 6;
constexpr std::uint64_t heap_bytes = 65536;
constexpr int block_count = 6;
// Requests, and the blocks they get: 256, 256, 512, 1024, 4096, 8192 bytes.
__device__ constexpr std::uint64_t request_bytes[block_count] = {1, 256, 300, 1000, 4096, 5000};
__device__ constexpr std::uint64_t block_bytes[block_count] = {256, 256, 512, 1024, 4096, 8192};
constexpr int outbox_block = 3;  // 1000 bytes of pattern
constexpr int inbox_block = 4;   // where the previous rank's outbox is put
constexpr int message_bytes = 1000;
constexpr int counter_rounds = 20;
constexpr int team_bytes = 2048;  // every rank's part of the team-aligned window
constexpr int kept_bytes = 512;   // the block that lives into the second run

__host__ __device__ unsigned char pattern(int rank, int at) {
  return static_cast<unsigned char>((rank * 31 + at * 13) % 253 + 1);
}

struct heap_data {
  dcuda_gptr* published;   // [ranks][2]: each rank's inbox and outbox
  dcuda_gptr* counter;     // [1]: rank 0's counter word
  dcuda_gptr* kept;        // [ranks]: the blocks that live into the second run
  unsigned char* landing;  // [ranks][message_bytes]: where each rank's gets land
  int* wrong;              // [ranks]: what each rank found wrong, counted
  unsigned long long* final_count;
  int run;  // 1, 2
};

__device__ void expect(bool holds, int* wrong) {
  if (!holds) atomicAdd(wrong, 1);
}

// Thread 0: the blocks' pointers name this rank's heap, each aligned to its size, inside the
// segment, apart from each other, at local addresses as far apart as their offsets.
__device__ void check_blocks(dcuda_state& gst, const dcuda_gptr* blocks, int rank, int* wrong) {
  const auto* first = static_cast<const char*>(dcuda_gptr_address(gst, blocks[0]));
  for (int b = 0; b < block_count; ++b) {
    const dcuda_gptr p = blocks[b];
    expect(p.unit == rank && p.window == DCUDA_WIN_HEAP, wrong);
    expect(p.offset % block_bytes[b] == 0 && p.offset + block_bytes[b] <= heap_bytes, wrong);
    expect(dcuda_gptr_is_local(gst, p), wrong);
    const auto* address = static_cast<const char*>(dcuda_gptr_address(gst, p));
    expect(address != nullptr && address - first == static_cast<std::int64_t>(p.offset) -
                                                        static_cast<std::int64_t>(blocks[0].offset),
           wrong);
    for (int other = 0; other < b; ++other) {
      const dcuda_gptr q = blocks[other];
      expect(p.offset + block_bytes[b] <= q.offset || q.offset + block_bytes[other] <= p.offset,
             wrong);
    }
  }
}

__device__ void first_run(dcuda_state& gst, heap_data* data, int rank, int size) {
  int* wrong = data->wrong + rank;
  dcuda_gptr blocks[block_count];
  for (int b = 0; b < block_count; ++b) blocks[b] = dcuda_malloc(gst, request_bytes[b]);
  if (threadIdx.x == 0) check_blocks(gst, blocks, rank, wrong);
  auto* outbox = static_cast<unsigned char*>(dcuda_gptr_address(gst, blocks[outbox_block]));
  auto* inbox = static_cast<unsigned char*>(dcuda_gptr_address(gst, blocks[inbox_block]));
  for (int i = static_cast<int>(threadIdx.x); i < 4096; i += blockDim.x) {
    if (i < message_bytes) outbox[i] = pattern(rank, i);
    inbox[i] = 0xee;
  }
  dcuda_gptr counter{};
  if (rank == 0) {
    counter = dcuda_malloc(gst, 8);
    if (threadIdx.x == 0) {
      *static_cast<unsigned long long*>(dcuda_gptr_address(gst, counter)) = 0;
      *data->counter = counter;
    }
  }
  if (threadIdx.x == 0) {
    data->published[2 * rank] = blocks[inbox_block];
    data->published[2 * rank + 1] = blocks[outbox_block];
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // the pointers, patterns and counter published

  // A put_notify from this rank's outbox into the next rank's inbox.
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  dcuda_put_notify_gptr(gst, data->published[2 * next], message_bytes, outbox, 5);
  dcuda_wait_notifications(gst, 5, 1);
  for (int i = static_cast<int>(threadIdx.x); i < 4096; i += blockDim.x) {
    expect(inbox[i] == (i < message_bytes ? pattern(previous, i) : 0xee), wrong);
  }
  // A get of the next rank's outbox.
  unsigned char* landing = data->landing + static_cast<std::size_t>(rank) * message_bytes;
  dcuda_get_gptr(gst, data->published[2 * next + 1], message_bytes, landing);
  for (int i = static_cast<int>(threadIdx.x); i < message_bytes; i += blockDim.x) {
    expect(landing[i] == pattern(next, i), wrong);
  }
  // Every rank counts on rank 0's word, with rank calls and thread-scoped calls.
  const dcuda_gptr shared_counter = *data->counter;
  for (int round = 0; round < counter_rounds; ++round) {
    dcuda_atomic_fetch_add(gst, shared_counter, 1ull);
    if (threadIdx.x == 0) dcuda_atomic_fetch_add_thread(gst, shared_counter, 1ull);
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  if (rank == 0) {
    unsigned long long count = 0;
    dcuda_get_gptr(gst, counter, 8, &count);
    if (threadIdx.x == 0) *data->final_count = count;
    dcuda_free(gst, counter);
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // no rank reads a block freed below any more

  // Freed, the blocks merge back into one: the whole segment is one block again.
  for (int b = 0; b < block_count; ++b) dcuda_free(gst, blocks[b]);
  const dcuda_gptr whole = dcuda_malloc(gst, heap_bytes);
  if (threadIdx.x == 0) expect(whole.offset == 0, wrong);
  dcuda_free(gst, whole);

  // Team-aligned: every rank's part of one window, reached by stepping a pointer across ranks.
  void* base = nullptr;
  dcuda_win team = DCUDA_WIN_NONE;
  dcuda_win_allocate(gst, DCUDA_COMM_DEVICE, team_bytes, &base, &team);
  expect(team != DCUDA_WIN_NONE && base != nullptr, wrong);
  auto* part = static_cast<unsigned char*>(base);
  for (int i = static_cast<int>(threadIdx.x); i < team_bytes; i += blockDim.x) {
    part[i] = pattern(rank, i);
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  const dcuda_gptr there = dcuda_gptr_add(gst, dcuda_gptr_of(team, 0, 0), next * team_bytes + 100);
  if (threadIdx.x == 0) expect(there.unit == next && there.offset == 100, wrong);
  dcuda_get_gptr(gst, there, 500, landing);
  for (int i = static_cast<int>(threadIdx.x); i < 500; i += blockDim.x) {
    expect(landing[i] == pattern(next, 100 + i), wrong);
  }
  dcuda_win_free(gst, team);  // gives the parts back: the whole segment is free again

  // With every window slot taken (31: the heaps hold the 32nd), dcuda_win_allocate gives
  // DCUDA_WIN_NONE and a null base, and gives the memory back.
  dcuda_win taken[31];
  for (dcuda_win& slot : taken) dcuda_win_create(gst, DCUDA_COMM_DEVICE, nullptr, 0, &slot);
  void* no_base = part;
  dcuda_win no_window = team;
  dcuda_win_allocate(gst, DCUDA_COMM_DEVICE, team_bytes, &no_base, &no_window);
  expect(no_window == DCUDA_WIN_NONE && no_base == nullptr, wrong);
  for (const dcuda_win slot : taken) dcuda_win_free(gst, slot);
  const dcuda_gptr again = dcuda_malloc(gst, heap_bytes);
  if (threadIdx.x == 0) expect(again.offset == 0, wrong);
  dcuda_free(gst, again);

  // A team-aligned window the run leaves open: dcuda_gpu_finish gives its parts back (the second
  // run finds the heap whole but for the kept block).
  void* left_open = nullptr;
  dcuda_win open_window = DCUDA_WIN_NONE;
  dcuda_win_allocate(gst, DCUDA_COMM_DEVICE, team_bytes, &left_open, &open_window);

  // A block for the next run.
  const dcuda_gptr kept = dcuda_malloc(gst, kept_bytes);
  auto* kept_bytes_here = static_cast<unsigned char*>(dcuda_gptr_address(gst, kept));
  for (int i = static_cast<int>(threadIdx.x); i < kept_bytes; i += blockDim.x) {
    kept_bytes_here[i] = pattern(rank + 100, i);
  }
  if (threadIdx.x == 0) data->kept[rank] = kept;
}

// The blocks the first run kept are still allocated, with their bytes, and can be freed.
__device__ void second_run(dcuda_state& gst, heap_data* data, int rank, int size) {
  int* wrong = data->wrong + rank;
  const int next = (rank + 1) % size;
  unsigned char* landing = data->landing + static_cast<std::size_t>(rank) * message_bytes;
  dcuda_get_gptr(gst, data->kept[next], kept_bytes, landing);
  for (int i = static_cast<int>(threadIdx.x); i < kept_bytes; i += blockDim.x) {
    expect(landing[i] == pattern(next + 100, i), wrong);
  }
  // Allocated still: the largest block left is half the segment.
  const dcuda_gptr half = dcuda_malloc(gst, heap_bytes / 2);
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // every get of a kept block done
  dcuda_free(gst, data->kept[rank]);
  dcuda_free(gst, half);
  const dcuda_gptr whole = dcuda_malloc(gst, heap_bytes);
  if (threadIdx.x == 0) expect(whole.offset == 0 && half.offset != 0, wrong);
  dcuda_free(gst, whole);
}

__global__ void heap_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  heap_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0, size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  if (data->run == 1) {
    first_run(gst, data, rank, size);
  } else {
    second_run(gst, data, rank, size);
  }
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(heap_blocks_are_reached_by_every_rank_and_outlive_their_run) {
  require_gpu();
  device_buffer<dcuda_gptr> published(2 * ranks), counter(1), kept(ranks);
  device_buffer<unsigned char> landing(static_cast<std::size_t>(ranks) * message_bytes);
  device_buffer<int> wrong(ranks);
  device_buffer<unsigned long long> final_count(1);
  heap_data data{published.data, counter.data,     kept.data, landing.data,
                 wrong.data,     final_count.data, 1};
  dcuda_rank_info info{};
  dcuda_host_context_handle context = gpu_test::start_dcuda(
      heap_kernel, 128,
      {"--dcuda-ranks-per-device=6", "--dcuda-heap-bytes=" + std::to_string(heap_bytes)},
      std::nullopt, info);
  dcuda_host_run(context, &data, sizeof data);
  for (int r = 0; r < ranks; ++r) DCUDA_CHECK_EQ(wrong.read()[r], 0);
  DCUDA_CHECK_EQ(final_count.read()[0],
                 static_cast<unsigned long long>(2 * ranks * counter_rounds));
  data.run = 2;
  dcuda_host_run(context, &data, sizeof data);
  dcuda_host_finish(context);
  for (int r = 0; r < ranks; ++r) DCUDA_CHECK_EQ(wrong.read()[r], 0);
}
