// A work queue in global memory (global access, docs/pgas.md): the chunks of numbers every rank
// owns form one list; a word in rank 0's part of the window says which chunk is next. Each rank
// takes the next chunk with a remote fetch-add, reads its numbers from the rank that owns them
// with a get through a global pointer, and adds them up, until no chunk is left: a rank that is
// slower takes fewer. The partial sums meet in rank 0's part through remote atomics. Every rank of
// every GPU of one node (gets and atomics reach the ranks of the node).
#include <algorithm>
#include <cstdio>
#include <vector>

#include <dcuda/device.cuh>
#include <dcuda/host.h>

constexpr int chunks_per_rank = 8;
constexpr int chunk_items = 1024;  // unsigned ints
constexpr int chunk_bytes = chunk_items * sizeof(unsigned);
// Every rank's part of the window: [next chunk][sum][chunks taken][padding][its chunks].
constexpr int header_bytes = 256;
constexpr int part_bytes = header_bytes + chunks_per_rank * chunk_bytes;

__host__ __device__ unsigned item_value(unsigned long long item) {
  return static_cast<unsigned>(item % 1000 + 1);
}

struct queue_data {
  unsigned char* parts;     // [ranks of this GPU][part_bytes]
  unsigned* staging;        // [ranks of this GPU][chunk_items]: where each rank's gets land
  int* taken;               // [ranks of this GPU]: chunks each rank took
  unsigned long long sum;   // rank 0's result, for the host
  unsigned long long done;  // chunks rank 0 counted
};

__global__ void work_queue(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  int rank, size;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  queue_data* data;
  dcuda_get_data(gst, (void**)&data);
  unsigned char* part = data->parts + blockIdx.x * part_bytes;
  auto* items = reinterpret_cast<unsigned*>(part + header_bytes);
  for (int i = threadIdx.x; i < chunks_per_rank * chunk_items; i += blockDim.x) {
    items[i] =
        item_value(static_cast<unsigned long long>(rank) * chunks_per_rank * chunk_items + i);
  }
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, part, part_bytes, &win);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // and on every GPU

  const dcuda_gptr next = dcuda_gptr_of(win, 0, 0);  // rank 0's first word
  const unsigned long long chunks = static_cast<unsigned long long>(size) * chunks_per_rank;
  unsigned* staging = data->staging + blockIdx.x * chunk_items;
  __shared__ unsigned long long chunk;
  unsigned long long sum = 0;  // this thread's share
  int taken = 0;
  for (;;) {
    // Thread 0 takes a ticket; the block reads it behind a barrier (the get below is a rank call,
    // whose entry barrier keeps thread 0 from the next ticket until every thread has read this).
    if (threadIdx.x == 0) chunk = dcuda_atomic_fetch_add_thread(gst, next, 1ull);
    __syncthreads();
    const unsigned long long c = chunk;
    if (c >= chunks) break;
    const int owner = static_cast<int>(c / chunks_per_rank);
    const int offset = header_bytes + static_cast<int>(c % chunks_per_rank) * chunk_bytes;
    dcuda_get_gptr(gst, dcuda_gptr_of(win, owner, offset), chunk_bytes, staging);
    for (int i = threadIdx.x; i < chunk_items; i += blockDim.x) sum += staging[i];
    ++taken;
  }
  // The partial sums and counts meet in rank 0's part.
  __shared__ unsigned long long block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  atomicAdd(&block_sum, sum);
  __syncthreads();
  dcuda_atomic_fetch_add(gst, dcuda_gptr_of(win, 0, 8), block_sum);
  dcuda_atomic_fetch_add(gst, dcuda_gptr_of(win, 0, 16), static_cast<unsigned long long>(taken));
  if (threadIdx.x == 0) data->taken[blockIdx.x] = taken;
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every rank's atomics are done
  if (rank == 0 && threadIdx.x == 0) {
    data->sum = *reinterpret_cast<volatile unsigned long long*>(part + 8);
    data->done = *reinterpret_cast<volatile unsigned long long*>(part + 16);
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

int main(int argc, char** argv) {
  dcuda_host_context_handle ctx;
  dcuda_host_init(argc, argv, &ctx, work_queue, /*threads_per_rank=*/256);
  dcuda_rank_info info;
  dcuda_host_get_rank_info(ctx, &info);
  const int here = info.rank_responsible;
  queue_data data{};
  cudaMalloc(&data.parts, static_cast<size_t>(here) * part_bytes);
  cudaMemset(data.parts, 0, static_cast<size_t>(here) * part_bytes);
  cudaMalloc(&data.staging, static_cast<size_t>(here) * chunk_bytes);
  cudaMalloc(&data.taken, here * sizeof(int));
  dcuda_host_run(ctx, &data, sizeof data);  // the struct comes back with rank 0's figures

  int status = 0;
  if (info.process_index == 0) {  // world rank 0 runs here
    const unsigned long long chunks =
        static_cast<unsigned long long>(info.rank_count) * chunks_per_rank;
    unsigned long long expected = 0;
    for (unsigned long long item = 0; item < chunks * chunk_items; ++item) {
      expected += item_value(item);
    }
    std::vector<int> taken(here);
    cudaMemcpy(taken.data(), data.taken, here * sizeof(int), cudaMemcpyDeviceToHost);
    const auto [fewest, most] = std::minmax_element(taken.begin(), taken.end());
    const bool right = data.sum == expected && data.done == chunks;
    std::printf(
        "%d ranks took %llu chunks (%d to %d each on this GPU); sum %llu, expected %llu: %s\n",
        info.rank_count, data.done, *fewest, *most, data.sum, expected,
        right ? "correct" : "WRONG");
    status = right ? 0 : 1;
  }
  cudaFree(data.parts);
  cudaFree(data.staging);
  cudaFree(data.taken);
  dcuda_host_finish(ctx);
  return status;
}
