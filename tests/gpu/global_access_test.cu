// Global access on one GPU: get of every size from every rank, through window handles and
// through global pointers whose arithmetic crosses ranks; the remote atomics from every rank on
// one word (each value handed out once, exactly one compare-and-swap wins, swaps lose nothing),
// rank calls and thread-scoped calls mixed on the same words; what dcuda_gptr_is_local and
// dcuda_gptr_address say.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dcuda/device.cuh"
#include "gpu_harness.h"

using gpu_test::device_buffer;
using gpu_test::require_gpu;
using gpu_test::run_dcuda;

namespace {

constexpr int ranks = 6;
constexpr int part_bytes = 8192;  // every rank's part of the window: a team-aligned window
constexpr int data_bytes = 6000;  // [0, data_bytes): the rank's pattern
// Rank 0's atomic words: u32 counter, u64 counter, u32 CAS, u64 swap, and for the thread-scoped
// calls u64 CAS, u32 swap.
constexpr int words_at = 6144;
// Every rank's put area: [13 B][3 B gap][1000 B][64 B untouched].
constexpr int puts_at = 6400;
constexpr int atomic_rounds = 50;
__device__ constexpr int get_sizes[] = {1, 2, 3, 4, 7, 8, 15, 16, 17, 64, 100, 1000, 4096, 5000};
constexpr int get_sizes_count = sizeof(get_sizes) / sizeof(get_sizes[0]);
constexpr int landing_bytes = 5000 + 128;

__host__ __device__ unsigned char pattern(int rank, int at) {
  return static_cast<unsigned char>((rank * 53 + at * 7) % 251 + 1);
}

struct access_data {
  unsigned char* windows;  // [ranks][part_bytes]
  unsigned char* landing;  // [ranks][landing_bytes]: where each rank's gets land
  int* wrong;              // [ranks]: wrong bytes each rank saw
  int* checks_failed;      // [ranks]: pointer checks each rank saw fail
  int* counter_seen;       // [2 * ranks * atomic_rounds]: how often fetch_add returned each value
  int* cas_old;            // [ranks]: what each rank's compare-and-swap found
  unsigned long long* swap_old;        // [ranks]: what each rank's swap found
  unsigned long long* cas_thread_old;  // [ranks]: what each rank's thread-scoped CAS found
  unsigned* swap_thread_old;           // [ranks]: what each rank's thread-scoped swap found
  unsigned long long* final_words;     // [6]: rank 0's words after every rank's atomics
};

__device__ int check_landing(const unsigned char* landing, int from_rank, int from_offset,
                             int size) {
  int wrong = 0;
  for (int i = static_cast<int>(threadIdx.x); i < size + 64; i += blockDim.x) {
    const unsigned char expected = i < size ? pattern(from_rank, from_offset + i) : 0;
    if (landing[i] != expected) ++wrong;
  }
  return __syncthreads_count(wrong);
}

__device__ void clear_landing(unsigned char* landing, int size) {
  for (int i = static_cast<int>(threadIdx.x); i < size; i += blockDim.x) landing[i] = 0;
  __syncthreads();
}

__global__ void global_access_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  access_data* data = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&data));
  int rank = 0, size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &size);
  unsigned char* part = data->windows + static_cast<std::size_t>(rank) * part_bytes;
  unsigned char* landing = data->landing + static_cast<std::size_t>(rank) * landing_bytes;
  for (int i = static_cast<int>(threadIdx.x); i < data_bytes; i += blockDim.x) {
    part[i] = pattern(rank, i);
  }
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_DEVICE, part, part_bytes, &win);  // a barrier: the patterns

  // Every size from every rank (itself included), at an odd offset, by handle and by pointer.
  int wrong = 0;
  for (int target = 0; target < size; ++target) {
    for (int k = 0; k < get_sizes_count; ++k) {
      const int bytes = get_sizes[k];
      const int offset = (k * 37 + target) % (data_bytes - bytes);
      dcuda_get(gst, win, target, offset, bytes, landing);
      wrong += check_landing(landing, target, offset, bytes);
      clear_landing(landing, bytes);
      // The same bytes through a pointer that starts at rank 0's first byte and crosses ranks.
      const dcuda_gptr p = dcuda_gptr_add(gst, dcuda_gptr_of(win, 0, 0),
                                          static_cast<std::int64_t>(target) * part_bytes + offset);
      dcuda_get_gptr(gst, p, bytes, landing + 1);  // a destination of another alignment
      wrong += check_landing(landing + 1, target, offset, bytes);
      clear_landing(landing, bytes + 1);
    }
  }

  // Pointer arithmetic and the local questions.
  int checks_failed = 0;
  if (threadIdx.x == 0) {
    const dcuda_gptr first = dcuda_gptr_of(win, 0, 0);
    const dcuda_gptr mine =
        dcuda_gptr_add(gst, first, static_cast<std::int64_t>(rank) * part_bytes);
    checks_failed += !(mine.unit == rank && mine.offset == 0);
    checks_failed += !dcuda_gptr_is_local(gst, mine);
    checks_failed += dcuda_gptr_address(gst, mine) != part;
    // Backwards across a rank boundary, and one past a rank's last byte is the next rank's first.
    const dcuda_gptr back = dcuda_gptr_add(gst, dcuda_gptr_of(win, size - 1, 10), -20);
    checks_failed += !(back.unit == size - 2 && back.offset == part_bytes - 10);
    const dcuda_gptr end = dcuda_gptr_add(gst, dcuda_gptr_of(win, 0, part_bytes - 1), 1);
    checks_failed += !(end.unit == 1 && end.offset == 0);
    const dcuda_gptr other = dcuda_gptr_of(win, (rank + 1) % size, 12);
    checks_failed += dcuda_gptr_is_local(gst, other);
    checks_failed += dcuda_gptr_address(gst, other) !=
                     data->windows + static_cast<std::size_t>((rank + 1) % size) * part_bytes + 12;
    checks_failed += dcuda_gptr_address(gst, dcuda_gptr_of(win, 0, part_bytes)) != nullptr;
    checks_failed += dcuda_gptr_address(gst, dcuda_gptr_of(win, size, 0)) != nullptr;
    checks_failed += dcuda_gptr_address(gst, dcuda_gptr_of(DCUDA_WIN_NONE, 0, 0)) != nullptr;
    checks_failed += !dcuda_gptr_is_null(dcuda_gptr_of(DCUDA_WIN_NONE, 0, 0));
  }

  // Remote atomics on rank 0's words, from every rank.
  const dcuda_gptr counter32 = dcuda_gptr_of(win, 0, words_at);
  const dcuda_gptr counter64 = dcuda_gptr_of(win, 0, words_at + 8);
  const dcuda_gptr cas_word = dcuda_gptr_of(win, 0, words_at + 16);
  const dcuda_gptr swap_word = dcuda_gptr_of(win, 0, words_at + 24);
  const dcuda_gptr cas_thread_word = dcuda_gptr_of(win, 0, words_at + 32);
  const dcuda_gptr swap_thread_word = dcuda_gptr_of(win, 0, words_at + 40);
  constexpr unsigned long long step64 = (1ull << 32) + 1;  // carries into the high half
  // Every thread must get thread 0's result: a call that handed some thread the result of the
  // atomic before would be counted in checks_failed.
  __shared__ unsigned long long thread0_value;
  const auto same_in_every_thread = [&](unsigned long long value) {
    if (threadIdx.x == 0) thread0_value = value;
    __syncthreads();
    const int differ = __syncthreads_count(value != thread0_value);
    return differ == 0;
  };
  for (int round = 0; round < atomic_rounds; ++round) {
    const unsigned seen = dcuda_atomic_fetch_add(gst, counter32, 1u);
    const unsigned long long seen64 = dcuda_atomic_fetch_add(gst, counter64, step64);
    if (!same_in_every_thread(seen) || !same_in_every_thread(seen64)) ++checks_failed;
    if (seen64 % step64 != 0) ++checks_failed;
    if (threadIdx.x == 0 && seen < static_cast<unsigned>(2 * ranks * atomic_rounds)) {
      atomicAdd(&data->counter_seen[seen], 1);
    }
    // The thread-scoped fetch-add draws from the same counter, between the rank calls.
    if (threadIdx.x == 0) {
      const unsigned by_thread = dcuda_atomic_fetch_add_thread(gst, counter32, 1u);
      if (by_thread < static_cast<unsigned>(2 * ranks * atomic_rounds)) {
        atomicAdd(&data->counter_seen[by_thread], 1);
      }
    }
  }
  unsigned long long cas_thread_old = ~0ull;
  unsigned swap_thread_old = ~0u;
  if (threadIdx.x == 0) {
    cas_thread_old = dcuda_atomic_compare_swap_thread(gst, cas_thread_word, 0ull,
                                                      static_cast<unsigned long long>(rank + 1));
    swap_thread_old =
        dcuda_atomic_swap_thread(gst, swap_thread_word, static_cast<unsigned>(rank + 1));
  }
  const int cas_old = dcuda_atomic_compare_swap(gst, cas_word, 0, rank + 1);
  const unsigned long long swap_old =
      dcuda_atomic_swap(gst, swap_word, static_cast<unsigned long long>(rank + 1));
  if (!same_in_every_thread(static_cast<unsigned long long>(cas_old)) ||
      !same_in_every_thread(swap_old)) {
    ++checks_failed;
  }

  // Puts through pointers: 13 bytes (one thread) and 1000 bytes (the block) into the next rank's
  // put area, each notified with put_notify_gptr; the first as a plain put_gptr, then a 0-byte
  // put_notify_gptr that notifies it.
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  const dcuda_gptr put_area = dcuda_gptr_of(win, next, puts_at);
  dcuda_put_gptr(gst, put_area, 13, part);
  dcuda_put_notify_gptr(gst, put_area, 0, part, 3);
  dcuda_put_notify_gptr(gst, dcuda_gptr_add(gst, put_area, 16), 1000, part + 100, 3);
  dcuda_wait_notifications(gst, 3, 2);
  for (int i = static_cast<int>(threadIdx.x); i < 16 + 1000 + 64; i += blockDim.x) {
    const unsigned char expected =
        i < 13 ? pattern(previous, i) : (i >= 16 && i < 1016 ? pattern(previous, 100 + i - 16) : 0);
    if (part[puts_at + i] != expected) ++wrong;
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_DEVICE);  // every rank's atomics are done
  if (rank == 0 && threadIdx.x == 0) {
    data->final_words[0] = *reinterpret_cast<volatile unsigned*>(part + words_at);
    data->final_words[1] = *reinterpret_cast<volatile unsigned long long*>(part + words_at + 8);
    data->final_words[2] = *reinterpret_cast<volatile int*>(part + words_at + 16);
    data->final_words[3] = *reinterpret_cast<volatile unsigned long long*>(part + words_at + 24);
    data->final_words[4] = *reinterpret_cast<volatile unsigned long long*>(part + words_at + 32);
    data->final_words[5] = *reinterpret_cast<volatile unsigned*>(part + words_at + 40);
  }
  checks_failed = __syncthreads_count(checks_failed != 0);
  wrong = __syncthreads_count(wrong != 0);  // threads that saw a wrong byte
  if (threadIdx.x == 0) {
    data->wrong[rank] = wrong;
    data->checks_failed[rank] = checks_failed;
    data->cas_old[rank] = cas_old;
    data->swap_old[rank] = swap_old;
    data->cas_thread_old[rank] = cas_thread_old;
    data->swap_thread_old[rank] = swap_thread_old;
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(get_and_atomics_reach_every_rank_of_the_gpu) {
  require_gpu();
  device_buffer<unsigned char> windows(static_cast<std::size_t>(ranks) * part_bytes);
  device_buffer<unsigned char> landing(static_cast<std::size_t>(ranks) * landing_bytes);
  device_buffer<int> wrong(ranks), checks_failed(ranks), cas_old(ranks);
  device_buffer<int> counter_seen(2 * ranks * atomic_rounds);
  device_buffer<unsigned long long> swap_old(ranks), cas_thread_old(ranks), final_words(6);
  device_buffer<unsigned> swap_thread_old(ranks);
  access_data data{windows.data,         landing.data,    wrong.data,    checks_failed.data,
                   counter_seen.data,    cas_old.data,    swap_old.data, cas_thread_old.data,
                   swap_thread_old.data, final_words.data};
  run_dcuda(global_access_kernel, 128, data, {"--dcuda-ranks-per-device=6"});

  for (int r = 0; r < ranks; ++r) {
    DCUDA_CHECK_EQ(wrong.read()[r], 0);
    DCUDA_CHECK_EQ(checks_failed.read()[r], 0);
  }
  // The rank and thread-scoped fetch_adds handed out every value below 2 * ranks * rounds exactly
  // once, and counted them all.
  const auto seen = counter_seen.read();
  for (int v = 0; v < 2 * ranks * atomic_rounds; ++v) DCUDA_CHECK_EQ(seen[v], 1);
  const auto words = final_words.read();
  DCUDA_CHECK_EQ(words[0], static_cast<unsigned long long>(2 * ranks * atomic_rounds));
  DCUDA_CHECK_EQ(words[1],
                 static_cast<unsigned long long>(ranks * atomic_rounds) * ((1ull << 32) + 1));
  // Exactly one compare-and-swap found 0 and won; every other one found the winner's value.
  const auto cas = cas_old.read();
  const int winners = static_cast<int>(std::count(cas.begin(), cas.end(), 0));
  DCUDA_CHECK_EQ(winners, 1);
  const int winner = static_cast<int>(std::find(cas.begin(), cas.end(), 0) - cas.begin());
  DCUDA_CHECK_EQ(static_cast<int>(words[2]), winner + 1);
  for (int r = 0; r < ranks; ++r) {
    if (r != winner) DCUDA_CHECK_EQ(cas[r], winner + 1);
  }
  // The swaps form one chain: what they found, with the final value, is the initial 0 and every
  // rank's value, each once.
  auto chain = swap_old.read();
  chain.push_back(words[3]);
  std::sort(chain.begin(), chain.end());
  for (int i = 0; i <= ranks; ++i) DCUDA_CHECK_EQ(chain[i], static_cast<unsigned long long>(i));
  // The same of the thread-scoped compare-and-swap and swap, on words of the other widths.
  const auto cas_thread = cas_thread_old.read();
  const auto thread_winner = std::find(cas_thread.begin(), cas_thread.end(), 0ull);
  DCUDA_CHECK_EQ(std::count(cas_thread.begin(), cas_thread.end(), 0ull), 1);
  const auto thread_winner_value =
      static_cast<unsigned long long>(thread_winner - cas_thread.begin() + 1);
  DCUDA_CHECK_EQ(words[4], thread_winner_value);
  for (const unsigned long long found : cas_thread) {
    if (found != 0) DCUDA_CHECK_EQ(found, thread_winner_value);
  }
  std::vector<unsigned long long> thread_chain;
  for (const unsigned found : swap_thread_old.read()) thread_chain.push_back(found);
  thread_chain.push_back(words[5]);
  std::sort(thread_chain.begin(), thread_chain.end());
  for (int i = 0; i <= ranks; ++i) {
    DCUDA_CHECK_EQ(thread_chain[i], static_cast<unsigned long long>(i));
  }
}
