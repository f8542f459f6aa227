// Distributed arrays (dcuda/device/array.cuh) over the ranks of one GPU: each rank writes its own
// elements in place and every rank reads all of them back by index and by range; puts into other
// ranks' elements of a block-cyclic array; fetch-add on the elements of a cyclic array of
// counters; dcuda::copy between two arrays of different distributions; and every part given back
// to the heaps when the arrays are freed.
#include <cstdint>
#include <string>

#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::device_buffer;
using gpu_test::require_gpu;

namespace {

constexpr int ranks = 6;
constexpr std::uint64_t heap_bytes = 65536;
constexpr std::uint64_t blocked_size = 1000;  // 167 per rank, the last rank 165
constexpr std::uint64_t cyclic_size = 777;    // blocks of 10
constexpr std::uint64_t block = 10;
constexpr int counter_rounds = 25;
constexpr std::uint64_t copy_from = 50;
constexpr std::uint64_t copy_count = 850;  // ends inside the target, before its last block
constexpr std::uint64_t copy_to = 100;

__host__ __device__ int first_value(std::uint64_t i) {
  return static_cast<int>(i * 3 + 1);
}
__host__ __device__ std::uint64_t second_value(std::uint64_t i) {
  return i * 0x9e3779b97f4a7c15ull + 5;
}

struct array_data {
  int* range;  // [ranks][blocked_size]: each rank's get_range
  int* wrong;  // [ranks]
};

__device__ void expect(bool holds, int* wrong) {
  if (!holds) atomicAdd(wrong, 1);
}

__global__ void array_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  array_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0, size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  int* wrong = data->wrong + rank;
  using dcuda::distribution;

  // A blocked array: each rank writes its own elements in place, then every rank reads them all.
  auto blocked = dcuda::array<int>::allocate(gst, DCUDA_COMM_DEVICE,
                                             distribution::blocked(blocked_size, size));
  expect(blocked.valid() && blocked.team_rank() == rank, wrong);
  expect(blocked.local_size() == (rank == size - 1 ? 165u : 167u), wrong);
  for (std::uint64_t j = threadIdx.x; j < blocked.local_size(); j += blockDim.x) {
    blocked.local()[j] = first_value(blocked.global_index(j));
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  for (std::uint64_t i = static_cast<std::uint64_t>(rank); i < blocked_size; i += 7) {
    const int value = blocked.get(gst, i);
    if (threadIdx.x == 0) expect(value == first_value(i), wrong);
  }
  const int last = blocked.get(gst, blocked_size - 1);
  if (threadIdx.x == 0) expect(last == first_value(blocked_size - 1), wrong);
  int* range = data->range + static_cast<std::size_t>(rank) * blocked_size;
  // A range across every rank's part but the ends, into memory outside the array: the bytes
  // after it stay as they were.
  constexpr std::uint64_t range_count = blocked_size - 13;
  for (std::uint64_t i = threadIdx.x; i < blocked_size; i += blockDim.x) range[i] = -7;
  __syncthreads();
  blocked.get_range(gst, 3, range_count, range);
  for (std::uint64_t i = threadIdx.x; i < blocked_size; i += blockDim.x) {
    expect(range[i] == (i < range_count ? first_value(i + 3) : -7), wrong);
  }
  // Loads through the addresses of the node.
  if (threadIdx.x == 0) {
    const int* address = blocked.address(gst, 500);
    expect(address != nullptr && *address == first_value(500), wrong);
    expect(blocked.is_local(blocked.global_index(0)) && !blocked.is_local(blocked_size), wrong);
  }

  // A block-cyclic array: each rank puts the elements i with i % size == rank, most of which other
  // ranks hold; after a barrier every rank finds its own elements right.
  auto cyclic = dcuda::array<std::uint64_t>::allocate(
      gst, DCUDA_COMM_DEVICE, distribution::block_cyclic(cyclic_size, size, block));
  for (std::uint64_t i = static_cast<std::uint64_t>(rank); i < cyclic_size;
       i += static_cast<std::uint64_t>(size)) {
    cyclic.put(gst, i, second_value(i));
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  for (std::uint64_t j = threadIdx.x; j < cyclic.local_size(); j += blockDim.x) {
    expect(cyclic.local()[j] == second_value(cyclic.global_index(j)), wrong);
  }
  expect(cyclic.local_size() == cyclic.layout().local_size(rank), wrong);

  // Counters: every rank adds 1 to every element, counter_rounds times.
  auto counters = dcuda::array<unsigned long long>::allocate(gst, DCUDA_COMM_DEVICE,
                                                             distribution::cyclic(12, size));
  for (std::uint64_t j = threadIdx.x; j < counters.local_size(); j += blockDim.x) {
    counters.local()[j] = 0;
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  for (int round = 0; round < counter_rounds; ++round) {
    for (std::uint64_t i = 0; i < counters.size(); ++i) {
      dcuda_atomic_fetch_add(gst, counters.gptr(gst, i), 1ull);
    }
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);
  for (std::uint64_t j = threadIdx.x; j < counters.local_size(); j += blockDim.x) {
    expect(counters.local()[j] == static_cast<unsigned long long>(size) * counter_rounds, wrong);
  }

  // A copy from the blocked array into a block-cyclic one of the same size, shifted.
  auto target = dcuda::array<int>::allocate(gst, DCUDA_COMM_DEVICE,
                                            distribution::block_cyclic(blocked_size, size, 7));
  for (std::uint64_t j = threadIdx.x; j < target.local_size(); j += blockDim.x) {
    target.local()[j] = -1;
  }
  dcuda::copy(gst, blocked, copy_from, copy_count, target, copy_to);
  for (std::uint64_t j = threadIdx.x; j < target.local_size(); j += blockDim.x) {
    const std::uint64_t i = target.global_index(j);
    const bool copied = i >= copy_to && i < copy_to + copy_count;
    expect(target.local()[j] == (copied ? first_value(i - copy_to + copy_from) : -1), wrong);
  }

  // Freed, every part is back: the whole heap is one block again.
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // no rank reads an array any more
  target.free(gst);
  counters.free(gst);
  cyclic.free(gst);
  blocked.free(gst);
  expect(!blocked.valid(), wrong);
  const dcuda_gptr whole = dcuda_malloc(gst, heap_bytes);
  if (threadIdx.x == 0) expect(whole.offset == 0, wrong);
  dcuda_free(gst, whole);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(array_elements_are_reached_by_index_range_atomics_and_copy_from_every_rank) {
  require_gpu();
  device_buffer<int> range(static_cast<std::size_t>(ranks) * blocked_size);
  device_buffer<int> wrong(ranks);
  array_data data{range.data, wrong.data};
  dcuda_rank_info info{};
  dcuda_host_context_handle context =
      gpu_test::start_dcuda(array_kernel, 128,
                            {"--dcuda-ranks-per-device=" + std::to_string(ranks),
                             "--dcuda-heap-bytes=" + std::to_string(heap_bytes)},
                            std::nullopt, info);
  dcuda_host_run(context, &data, sizeof data);
  dcuda_host_finish(context);
  for (int r = 0; r < ranks; ++r) DCUDA_CHECK_EQ(wrong.read()[r], 0);
}
