// The thread-scoped calls on one GPU: thread 0 of a rank puts, notifies, tests and waits alone;
// what arrives, how often, in which order, and mixed with rank calls.
#include <vector>

#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::device_buffer;
using gpu_test::require_gpu;
using gpu_test::run_dcuda;

namespace {

__host__ __device__ unsigned char byte_of(int sender, int at) {
  return static_cast<unsigned char>((sender * 37 + at * 11) % 251 + 1);
}

// ---------------------------------------------------------------------------------------------
// Every rank's thread 0 sends every size a thread put takes to the next rank, each with one
// notification: once to odd offsets (a thread's byte-by-byte copy), once the scalar sizes (1, 2,
// 4, 8, 16) between ends aligned to 16 (one load and one store). The next rank's thread 0 waits
// for all of them, and the block checks every byte, those between the messages included (zero).
constexpr int sizes = DCUDA_THREAD_PUT_LIMIT;
constexpr int stride = 32;
constexpr int send_bytes = 64;
constexpr int odd_receive = send_bytes + 1;  // message `size` at odd_receive + size * stride
constexpr int scalar_sizes = 5;              // 1 << k bytes at aligned_receive + 16 * k
constexpr int aligned_receive = (odd_receive + (sizes + 1) * stride + 15) / 16 * 16;
constexpr int window_bytes = aligned_receive + scalar_sizes * 16;
static_assert(window_bytes % 16 == 0, "every rank's window starts 16-aligned");

struct ring_data {
  unsigned char* windows;  // [ranks][window_bytes]
  int* wrong;              // [ranks]: wrong bytes seen by each rank
  int* extra;              // [ranks]: notifications found after the expected ones
};

__global__ void thread_ring_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  ring_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0, ranks = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &ranks);
  unsigned char* window = data->windows + static_cast<std::size_t>(rank) * window_bytes;
  for (int i = static_cast<int>(threadIdx.x); i < send_bytes; i += blockDim.x) {
    window[i] = byte_of(rank, i);
  }
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, window, window_bytes, &win);  // a barrier: the bytes
  const int next = (rank + 1) % ranks, previous = (rank + ranks - 1) % ranks;
  int extra = 0;
  if (threadIdx.x == 0) {
    for (int size = 1; size <= sizes; ++size) {
      dcuda_put_notify_thread(gst, win, next, odd_receive + size * stride, size, window + size, 7);
    }
    for (int k = 0; k < scalar_sizes; ++k) {
      dcuda_put_notify_thread(gst, win, next, aligned_receive + 16 * k, 1 << k, window, 9);
    }
    dcuda_wait_notifications_thread(gst, 7, sizes);
    dcuda_wait_notifications_thread(gst, 9, scalar_sizes);
    extra = dcuda_test_notifications_thread(gst, 7, 1) + dcuda_test_notifications_thread(gst, 9, 1);
  }
  __syncthreads();  // what thread 0 acquired, for the block
  int wrong = 0;
  for (int at = static_cast<int>(threadIdx.x); at < (sizes + 1) * stride; at += blockDim.x) {
    const int size = at / stride, i = at % stride;
    const unsigned char expected = size >= 1 && i < size ? byte_of(previous, size + i) : 0;
    if (window[odd_receive + at] != expected) ++wrong;
  }
  for (int at = static_cast<int>(threadIdx.x); at < scalar_sizes * 16; at += blockDim.x) {
    const int size = 1 << (at / 16), i = at % 16;
    const unsigned char expected = i < size ? byte_of(previous, i) : 0;
    if (window[aligned_receive + at] != expected) ++wrong;
  }
  wrong = __syncthreads_count(wrong);
  if (threadIdx.x == 0) {
    data->wrong[rank] = wrong;
    data->extra[rank] = extra;
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(thread_scoped_put_notify_delivers_every_size_once) {
  require_gpu();
  constexpr int ranks = 5;
  device_buffer<unsigned char> windows(static_cast<std::size_t>(ranks) * window_bytes);
  device_buffer<int> wrong(ranks), extra(ranks);
  ring_data data{windows.data, wrong.data, extra.data};
  run_dcuda(thread_ring_kernel, 128, data, {"--dcuda-ranks-per-device=5"});
  for (int r = 0; r < ranks; ++r) {
    DCUDA_CHECK_EQ(wrong.read()[r], 0);
    DCUDA_CHECK_EQ(extra.read()[r], 0);
  }
  // The senders' areas are untouched.
  const auto bytes = windows.read();
  for (int r = 0; r < ranks; ++r) {
    for (int i = 0; i < send_bytes; ++i) {
      DCUDA_CHECK_EQ(static_cast<int>(bytes[static_cast<std::size_t>(r) * window_bytes + i]),
                     static_cast<int>(byte_of(r, i)));
    }
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// Thread calls and rank calls to one target, interleaved, keep issue order. Rank 0, 2000
// rounds: round i stores i into its source and sends it to the same word of rank 1, by a thread
// put_notify (odd rounds) or a rank put_notify (even rounds); every 100th round also a rank put
// of 4 KiB whose notification is a thread notify (tag 5), so that the thread's release covers
// the block's stores, and which rank 1 acknowledges (tag 6) once it has checked the bytes. Rank 1
// waits with thread calls and rank calls in turn and never sees an older word after a newer
// notification, nor a block put without its bytes.
constexpr unsigned order_rounds = 2000;
constexpr int bulk_words = 1024;

struct order_data {
  unsigned* window;  // rank 0: [0, bulk_words + 1) source; rank 1: [bulk_words + 1, ...) target
  int* errors;
  unsigned* last_seen;
  int* tested;  // [2]: rank 1's test before the first notification, and after the last
};

__global__ void mixed_order_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  order_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  unsigned* base = rank == 0 ? data->window : data->window + bulk_words + 1;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, rank < 2 ? base : nullptr,
                   rank < 2 ? (bulk_words + 1) * 4 : 0, &win);
  if (rank == 1 && threadIdx.x == 0) data->tested[0] = dcuda_test_notifications_thread(gst, 4, 1);
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // rank 1 tested before anything was sent
  if (rank == 0) {
    for (unsigned i = 1; i <= order_rounds; ++i) {
      if (i % 100 == 0) {
        // Rank 1 has checked the block put before (its acknowledgement, tag 6).
        if (i > 100) dcuda_wait_notifications(gst, 6, 1);
        for (int w = static_cast<int>(threadIdx.x); w < bulk_words; w += blockDim.x) {
          base[1 + w] = i * 4096u + static_cast<unsigned>(w);
        }
        dcuda_put(gst, win, 1, 4, bulk_words * 4, base + 1);
        if (threadIdx.x == 0) dcuda_notify_thread(gst, 1, DCUDA_COMM_DEVICE, 5);
      }
      if (i % 2 == 1) {
        if (threadIdx.x == 0) {
          base[0] = i;
          dcuda_put_notify_thread(gst, win, 1, 0, 4, base, 4);
        }
        __syncthreads();  // the next round's rank put reads the source after thread 0's put
      } else {
        if (threadIdx.x == 0) base[0] = i;
        dcuda_put_notify(gst, win, 1, 0, 4, base, 4);
      }
    }
    dcuda_wait_notifications(gst, 6, 1);
  } else if (rank == 1) {
    unsigned last = 0;
    for (unsigned i = 1; i <= order_rounds; ++i) {
      if (i % 3 == 0) {
        dcuda_wait_notifications(gst, 4, 1);
      } else {
        if (threadIdx.x == 0) dcuda_wait_notifications_thread(gst, 4, 1);
        __syncthreads();
      }
      const unsigned seen = *reinterpret_cast<volatile unsigned*>(&base[0]);
      if (threadIdx.x == 0 && (seen < i || seen < last)) atomicAdd(data->errors, 1);
      last = seen;
      if (i % 100 == 0) {
        if (threadIdx.x == 0) dcuda_wait_notifications_thread(gst, 5, 1);
        __syncthreads();
        for (int w = static_cast<int>(threadIdx.x); w < bulk_words; w += blockDim.x) {
          if (base[1 + w] != i * 4096u + static_cast<unsigned>(w)) atomicAdd(data->errors, 1);
        }
        __syncthreads();  // every thread checked before the next block put may land
        if (threadIdx.x == 0) dcuda_notify_thread(gst, 0, DCUDA_COMM_DEVICE, 6);
      }
    }
    if (threadIdx.x == 0) {
      data->last_seen[0] = last;
      data->tested[1] =
          dcuda_test_notifications_thread(gst, 4, 1) + dcuda_test_notifications_thread(gst, 5, 1);
    }
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(thread_and_rank_calls_to_one_target_keep_issue_order) {
  require_gpu();
  device_buffer<unsigned> window(2 * (bulk_words + 1));
  device_buffer<int> errors(1), tested(2);
  device_buffer<unsigned> last_seen(1);
  order_data data{window.data, errors.data, last_seen.data, tested.data};
  run_dcuda(mixed_order_kernel, 128, data, {"--dcuda-ranks-per-device=3"});
  DCUDA_CHECK_EQ(errors.read()[0], 0);
  DCUDA_CHECK_EQ(last_seen.read()[0], order_rounds);
  DCUDA_CHECK_EQ(tested.read()[0], 0);
  DCUDA_CHECK_EQ(tested.read()[1], 0);
}
