// dcuda across processes, one GPU each, under mpirun: every case runs in every
// process. CTest runs the suite on the peer path (world barriers met on the GPUs), on the peer
// path with DCUDA_HOST_WORLD_BARRIER=1 (world barriers through the hosts), and with
// DCUDA_FORCE_NETWORK=1 on the network path (host proxies and MPI). Every byte that travels is
// checked where it lands.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "dcuda/device.cuh"
#include "dcuda/host.h"
#include "gpu_harness.h"
#include "mpi_test_main.h"

namespace {

constexpr int threads_per_rank = 256;
constexpr int ranks_per_device = 4;
const std::vector<std::string> small_gpu{"--dcuda-ranks-per-device=4"};

__host__ __device__ unsigned char pattern(int source, std::uint64_t offset, int round) {
  return static_cast<unsigned char>((offset * 131u + static_cast<std::uint64_t>(source) * 71u +
                                     static_cast<std::uint64_t>(round) * 17u) %
                                        251u +
                                    1u);
}

__device__ void fill(unsigned char* buffer, std::uint64_t bytes, int source, int round) {
  for (std::uint64_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    buffer[i] = pattern(source, i, round);
  }
  __syncthreads();
}

// Counts wrong bytes of buffer[0, bytes) (every thread returns the same count).
__device__ int wrong_bytes(const unsigned char* buffer, std::uint64_t bytes, int source,
                           int round) {
  int wrong = 0;
  for (std::uint64_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    if (buffer[i] != pattern(source, i, round)) ++wrong;
  }
  return __syncthreads_count(wrong);
}

// Device memory of one process: `per_rank` bytes for each of its ranks.
struct process_memory {
  explicit process_memory(std::size_t bytes) {
    GPU_CHECK(cudaMalloc(&data, bytes));
    GPU_CHECK(cudaMemset(data, 0, bytes));
  }
  ~process_memory() { cudaFree(data); }
  process_memory(const process_memory&) = delete;
  process_memory& operator=(const process_memory&) = delete;
  unsigned char* data = nullptr;
};

// DCUDA_TEST_SHARE_WINDOWS=1 (gpu-check.sh sets it for compute-sanitizer memcheck): every case
// shares its process memory with dcuda_host_share_memory before the run, so that the peer path's
// window memory is mapped before the kernel starts (memcheck knows no memory mapped later).
std::optional<void*> shared_if_asked(void* memory) {
  const char* asked = std::getenv("DCUDA_TEST_SHARE_WINDOWS");
  if (asked != nullptr && std::string(asked) == "1") return memory;
  return std::nullopt;
}

// The skip of the whole suite is decided in main; a case needs no check of its own.
int process_index() {
  return mpi_test::process_index();
}

struct run_data {
  unsigned char* memory;  // this process's device memory: [ranks_per_device][per_rank]
  std::uint64_t per_rank;
  int process;     // index of this process
  int mismatches;  // wrong bytes seen by this process's ranks
  int count_errors;
  int info[8];
};

// ---- rank info ----

__global__ void identity_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int world_rank = 0, world_size = 0, device_rank = 0, device_size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &world_size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &device_size);
  if (threadIdx.x == 0) {
    if (device_rank == 0) {
      run->info[0] = world_rank;
      run->info[1] = world_size;
      run->info[2] = device_size;
    }
    if (world_rank - device_rank != run->info[3]) atomicAdd(&run->count_errors, 1);
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(rank_info_and_communicators_span_every_process) {
  run_data data{};
  // The rank start comes from the host's rank info; the kernel compares its own view with it.
  dcuda_host_context_handle context = nullptr;
  std::string program = "multi_gpu_tests", cap = small_gpu[0];
  char* argv[] = {program.data(), cap.data(), nullptr};
  dcuda_host_init(2, argv, &context, identity_kernel, threads_per_rank);
  dcuda_rank_info info{};
  dcuda_host_get_rank_info(context, &info);
  data.info[3] = info.rank_start;
  dcuda_host_run(context, &data, sizeof data);
  dcuda_host_finish(context);

  const int processes = mpi_test::process_count();
  DCUDA_CHECK_EQ(info.process_count, processes);
  DCUDA_CHECK_EQ(info.process_index, process_index());
  DCUDA_CHECK_EQ(info.rank_responsible, ranks_per_device);
  DCUDA_CHECK_EQ(info.rank_count, processes * ranks_per_device);
  DCUDA_CHECK_EQ(info.rank_start, process_index() * ranks_per_device);
  // One host; DCUDA_EMULATE_NODES splits its processes into nodes of contiguous process blocks.
  const char* emulated = std::getenv("DCUDA_EMULATE_NODES");
  const int nodes = emulated != nullptr ? std::atoi(emulated) : 1;
  const auto node_of = [&](int process) { return process * nodes / processes; };
  int first_here = 0, processes_here = 0;
  for (int p = processes - 1; p >= 0; --p) {
    if (node_of(p) != node_of(process_index())) continue;
    first_here = p;
    ++processes_here;
  }
  DCUDA_CHECK_EQ(info.node_count, nodes);
  DCUDA_CHECK_EQ(info.node_index, node_of(process_index()));
  DCUDA_CHECK_EQ(info.device_count, processes_here);
  DCUDA_CHECK_EQ(info.device_index, process_index() - first_here);
  DCUDA_CHECK_EQ(data.info[0], info.rank_start);
  DCUDA_CHECK_EQ(data.info[1], info.rank_count);
  DCUDA_CHECK_EQ(data.info[2], ranks_per_device);
  DCUDA_CHECK_EQ(data.count_errors, 0);
}

// ---- how many ranks a GPU runs ----

struct fill_data {
  int ranks_notified;  // this process's ranks whose wait took their predecessor's notification
};

// Every rank notifies the next world rank (the last one wraps to rank 0) and waits for its
// predecessor: the GPU's last rank, on the multiprocessor a delivery agent would take, talks to
// the next GPU's first.
__global__ void __launch_bounds__(1024) notify_the_next_rank_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  fill_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int world_rank = 0, world_size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &world_rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &world_size);
  constexpr int tag = 7;
  dcuda_notify(gst, (world_rank + 1) % world_size, DCUDA_COMM_WORLD, tag);
  dcuda_wait_notifications(gst, tag, 1);
  if (threadIdx.x == 0) atomicAdd(&run->ranks_notified, 1);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_gpu_finish(gst);
}

// Without a cap, a GPU runs a rank on every resident block, less the one kept for the delivery
// agent only where some process is reached through the network (DCUDA_FORCE_NETWORK=1, or
// another node: DCUDA_EMULATE_NODES above 1 here); on the peer path that block's multiprocessor
// would otherwise stay idle.
DCUDA_TEST(every_resident_block_is_a_rank_unless_the_network_needs_an_agent) {
  constexpr int threads = 1024;
  const char* forced = std::getenv("DCUDA_FORCE_NETWORK");
  const char* emulated = std::getenv("DCUDA_EMULATE_NODES");
  const bool network = (forced != nullptr && std::string(forced) == "1") ||
                       (emulated != nullptr && std::atoi(emulated) > 1);
  const int resident = gpu_test::resident_ranks(notify_the_next_rank_kernel, threads);

  fill_data data{};
  dcuda_host_context_handle context = nullptr;
  std::string program = "multi_gpu_tests";
  char* argv[] = {program.data(), nullptr};
  dcuda_host_init(1, argv, &context, notify_the_next_rank_kernel, threads);
  dcuda_rank_info info{};
  dcuda_host_get_rank_info(context, &info);
  dcuda_host_run(context, &data, sizeof data);
  dcuda_host_finish(context);

  DCUDA_CHECK_EQ(info.rank_responsible, network ? resident - 1 : resident);
  DCUDA_CHECK_EQ(info.rank_count, mpi_test::process_count() * info.rank_responsible);
  DCUDA_CHECK_EQ(data.ranks_notified, info.rank_responsible);
}

// Where a rank is, and its partners: the rank with the same index on the next GPU (its target)
// and on the previous one (its source), all processes running the same rank count.
struct place {
  int rank, device_rank, next_gpu_peer, previous_gpu_peer;
};
__device__ place locate(dcuda_state& gst) {
  int rank = 0, size = 0, device_rank = 0, device_size = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &device_size);
  return {rank, device_rank, (rank + device_size) % size, (rank - device_size + size) % size};
}

// ---- ring: every size, to the same rank of the next process ----

// Up to 16 bytes travel in the peer ring (8 in the record, the rest in a continuation slot),
// larger ones are copied by the block (detail/device/put_path.cuh); the sizes around those limits
// are here. The receive area starts at an odd offset, so no copy is aligned.
__device__ constexpr std::uint64_t ring_sizes[] = {
    1,  2,  3,  5,  6,  7,    8,    9,    10,   12,    13,       15,
    16, 17, 48, 64, 65, 1000, 1024, 1025, 4096, 65537, 1u << 20, (3u << 20) + 5};
constexpr std::uint64_t ring_largest = (3u << 20) + 5;

__global__ void ring_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  const int rank = here.rank, device_rank = here.device_rank;
  // Window: [send area][receive area], each ring_largest bytes.
  unsigned char* window = run->memory + device_rank * run->per_rank;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(2 * ring_largest), &win);
  const int target = here.next_gpu_peer, source = here.previous_gpu_peer;
  int round = 0;
  for (const std::uint64_t bytes : ring_sizes) {
    ++round;
    fill(window, bytes, rank, round);
    dcuda_put_notify(gst, win, target, static_cast<int>(ring_largest), static_cast<int>(bytes),
                     window, 1);
    dcuda_wait_notifications(gst, 1, 1);
    const int wrong = wrong_bytes(window + ring_largest, bytes, source, round);
    if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // nobody overwrites what is being checked
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(put_notify_of_every_size_crosses_to_the_next_process) {
  process_memory memory(ranks_per_device * 2 * ring_largest);
  run_data data{memory.data, 2 * ring_largest, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(ring_kernel, threads_per_rank, data, small_gpu, shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
}

// The same ring, every process's run started with dcuda_host_run_async on a stream of its own:
// the processes set the run up together, the contexts' threads serve it (the network path's
// proxy included), and the results come back in stream order.
DCUDA_TEST(an_asynchronous_run_on_every_process_delivers_every_size) {
  process_memory memory(ranks_per_device * 2 * ring_largest);
  run_data data{memory.data, 2 * ring_largest, process_index(), 0, 0, {}};
  const auto result =
      gpu_test::run_dcuda_async(ring_kernel, threads_per_rank, data, small_gpu,
                                shared_if_asked(memory.data), [&] { data.mismatches = 12345; });
  DCUDA_CHECK_EQ(data.mismatches, 0);  // the device's count, copied back over the host's
  DCUDA_CHECK(result.milliseconds > 0);
}

// ---- all to all ----

constexpr int all_to_all_bytes = 64;

__global__ void all_to_all_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0, size = 0, device_rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &size);
  dcuda_comm_rank(gst, DCUDA_COMM_DEVICE, &device_rank);
  // Window: [send: 64][receive: 64 per source rank]
  unsigned char* window = run->memory + device_rank * run->per_rank;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(run->per_rank), &win);
  fill(window, all_to_all_bytes, rank, 7);
  for (int step = 1; step < size; ++step) {
    const int target = (rank + step) % size;
    dcuda_put_notify(gst, win, target, all_to_all_bytes * (1 + rank), all_to_all_bytes, window, 2);
  }
  dcuda_wait_notifications(gst, 2, size - 1);
  int wrong = 0;
  for (int source = 0; source < size; ++source) {
    if (source == rank) continue;
    wrong += wrong_bytes(window + all_to_all_bytes * (1 + source), all_to_all_bytes, source, 7);
  }
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  // Nothing more may have arrived.
  const int extra = dcuda_test_notifications(gst, 2, 1);
  if (threadIdx.x == 0 && extra != 0) atomicAdd(&run->count_errors, 1);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(all_to_all_reaches_every_rank_of_every_process) {
  const std::uint64_t per_rank = all_to_all_bytes * (1 + 64);
  process_memory memory(ranks_per_device * per_rank);
  run_data data{memory.data, per_rank, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(all_to_all_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  DCUDA_CHECK_EQ(data.count_errors, 0);
}

// ---- world barriers order every rank's puts ----

// Every rank of every process, round after round: a plain 64-byte put and a 4-byte put_notify
// (carried in the ring record on the peer path, landing only when the target takes it) to the
// same rank of the next process, then a world barrier, after which the target reads both without
// waiting for the notification; a second barrier keeps the next round from overwriting them. At
// the end every notification must have been counted, and none more. On the peer path the GPUs'
// leaders meet in these barriers (protocol/node_barrier.h), through the hosts elsewhere.
constexpr int barrier_rounds = 40;
constexpr std::uint64_t barrier_plain_bytes = 64;

__global__ void barrier_order_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  // Window: [send: 64][receive plain: 64][receive carried: 4]
  unsigned char* window = run->memory + here.device_rank * run->per_rank;
  unsigned char* plain = window + barrier_plain_bytes;
  unsigned char* carried = window + 2 * barrier_plain_bytes;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(run->per_rank), &win);
  constexpr int plain_at = static_cast<int>(barrier_plain_bytes);
  int wrong = 0;
  for (int round = 1; round <= barrier_rounds; ++round) {
    fill(window, barrier_plain_bytes, here.rank, round);
    dcuda_put(gst, win, here.next_gpu_peer, plain_at, plain_at, window);
    dcuda_put_notify(gst, win, here.next_gpu_peer, 2 * plain_at, 4, window, 6);
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
    wrong += wrong_bytes(plain, barrier_plain_bytes, here.previous_gpu_peer, round);
    wrong += wrong_bytes(carried, 4, here.previous_gpu_peer, round);
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  }
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  // Every round's notification has been counted (so this does not wait), and no other.
  dcuda_wait_notifications(gst, 6, barrier_rounds);
  const int extra = dcuda_test_notifications(gst, 6, 1);
  if (threadIdx.x == 0 && extra != 0) atomicAdd(&run->count_errors, 1);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(world_barriers_order_every_ranks_puts_and_carried_payloads) {
  const std::uint64_t per_rank = 2 * barrier_plain_bytes + 64;
  process_memory memory(ranks_per_device * per_rank);
  run_data data{memory.data, per_rank, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(barrier_order_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  DCUDA_CHECK_EQ(data.count_errors, 0);
}

// ---- order, flush, barrier ----

constexpr std::uint64_t big_bytes = 2u << 20;

// Rank 0 of every process sends to rank 0 of the next process: a large put, a notify, a small
// put_notify; then a large put, flush, overwrite of the source, notify; then a plain put and a
// world barrier. The receiver checks, at each notification, that the data before it is there.
__global__ void order_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  const int rank = here.rank, device_rank = here.device_rank;
  // Window: [send: big][receive big][receive small: 16]
  unsigned char* window = run->memory + device_rank * run->per_rank;
  unsigned char* received = window + big_bytes;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(run->per_rank), &win);
  const bool active = device_rank == 0;
  const int target = here.next_gpu_peer, source = here.previous_gpu_peer;
  int wrong = 0;
  for (int round = 1; round <= 3 && active; ++round) {
    fill(window, big_bytes, rank, round);
    dcuda_put(gst, win, target, static_cast<int>(big_bytes), static_cast<int>(big_bytes), window);
    dcuda_notify(gst, target, DCUDA_COMM_WORLD, 3);
    dcuda_put_notify(gst, win, target, static_cast<int>(2 * big_bytes), 16, window + 100, 4);
    dcuda_wait_notifications(gst, 3, 1);
    wrong += wrong_bytes(received, big_bytes, source, round);
    dcuda_wait_notifications(gst, 4, 1);
    for (std::uint64_t i = threadIdx.x; i < 16; i += blockDim.x) {
      if (received[big_bytes + i] != pattern(source, 100 + i, round)) ++wrong;
    }
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // checked before the next put overwrites it
    // Flush: once it returns the source may change; the target still gets the old bytes.
    fill(window, big_bytes, rank, round + 10);
    dcuda_put(gst, win, target, static_cast<int>(big_bytes), static_cast<int>(big_bytes), window);
    dcuda_win_flush(gst, win);
    for (std::uint64_t i = threadIdx.x; i < big_bytes; i += blockDim.x) window[i] = 0xee;
    __syncthreads();
    dcuda_notify(gst, target, DCUDA_COMM_WORLD, 5);
    dcuda_wait_notifications(gst, 5, 1);
    wrong += wrong_bytes(received, big_bytes, source, round + 10);
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  }
  // Inactive ranks pass the world barriers the active ones use.
  for (int round = 1; round <= 3 && !active; ++round) {
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
    dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  }
  // A world barrier makes a plain put visible.
  if (active) {
    fill(window, big_bytes, rank, 42);
    dcuda_put(gst, win, target, static_cast<int>(big_bytes), static_cast<int>(big_bytes), window);
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  if (active) wrong += wrong_bytes(received, big_bytes, source, 42);
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(notifications_follow_their_data_and_flush_frees_the_source) {
  const std::uint64_t per_rank = 2 * big_bytes + 16;
  process_memory memory(ranks_per_device * per_rank);
  run_data data{memory.data, per_rank, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(order_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
}

// ---- mixed sizes and tags, and window slots that differ between GPUs ----

constexpr int mixed_messages = 24;
__host__ __device__ int mixed_size(int i) {
  return (i * 7919) % 3000 + (i % 5 == 0 ? 200000 : 0);
}
__host__ __device__ std::uint64_t mixed_offset(int i) {
  std::uint64_t at = 0;
  for (int k = 0; k < i; ++k) at += static_cast<std::uint64_t>(mixed_size(k));
  return at;
}

__global__ void mixed_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  const int rank = here.rank, device_rank = here.device_rank;
  const std::uint64_t half = run->per_rank / 2;
  unsigned char* window = run->memory + device_rank * run->per_rank;
  // Process 0 first takes a slot for a window of its GPU alone: the world window must still
  // get one slot on every GPU.
  dcuda_win local = DCUDA_WIN_NONE;
  if (run->process == 0) dcuda_win_create(gst, DCUDA_COMM_DEVICE, window, 16, &local);
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(run->per_rank), &win);
  const int target = here.next_gpu_peer, source = here.previous_gpu_peer;
  for (int i = 0; i < mixed_messages; ++i) {
    fill(window + mixed_offset(i), static_cast<std::uint64_t>(mixed_size(i)), rank, i);
  }
  for (int i = 0; i < mixed_messages; ++i) {
    dcuda_put_notify(gst, win, target, static_cast<int>(half + mixed_offset(i)), mixed_size(i),
                     window + mixed_offset(i), 10 + i % 4);
  }
  for (int tag = 10; tag < 14; ++tag) dcuda_wait_notifications(gst, tag, mixed_messages / 4);
  int wrong = 0;
  for (int i = 0; i < mixed_messages; ++i) {
    wrong += wrong_bytes(window + half + mixed_offset(i), static_cast<std::uint64_t>(mixed_size(i)),
                         source, i);
  }
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  dcuda_win_free(gst, win);
  if (run->process == 0) dcuda_win_free(gst, local);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(mixed_sizes_and_tags_arrive_whole_with_slots_that_differ_per_gpu) {
  const std::uint64_t per_rank = 2 * mixed_offset(mixed_messages);
  process_memory memory(ranks_per_device * per_rank);
  run_data data{memory.data, per_rank, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(mixed_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  // Twice in a row: the second run starts from a clean state.
  gpu_test::run_dcuda(mixed_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
}

// dcuda_host_share_memory: windows in memory shared before the run deliver like the others, in
// two runs in a row; process 0 shares its memory, the others share nothing (their windows are
// mapped at creation, while the kernel runs), so both ways meet in one run. A second sharing of
// the same allocation in the next context changes nothing.
DCUDA_TEST(windows_in_memory_shared_before_the_run_deliver_every_byte) {
  process_memory memory(ranks_per_device * 2 * ring_largest);
  run_data data{memory.data, 2 * ring_largest, process_index(), 0, 0, {}};
  // (Under DCUDA_TEST_SHARE_WINDOWS=1 every process shares: nothing may be mapped late.)
  void* shared = process_index() == 0 || shared_if_asked(memory.data) ? memory.data : nullptr;
  gpu_test::run_dcuda(ring_kernel, threads_per_rank, data, small_gpu, shared);
  DCUDA_CHECK_EQ(data.mismatches, 0);
  gpu_test::run_dcuda(ring_kernel, threads_per_rank, data, small_gpu, shared);
  DCUDA_CHECK_EQ(data.mismatches, 0);
}

// ---- payloads carried in ring records mixed with regular operations (peer path) ----

// Round k of `inline_rounds`: what the sender does, and where (aligned: the receive areas are 64
// bytes apart). Payloads of up to 8 bytes travel in the ring record (protocol/peer_ring.h), up to
// 16 with a continuation slot, larger ones by stores and a fence. The sender never
// waits, and 400 rounds are more than a ring holds: it also waits for room, taking its own
// records meanwhile.
constexpr int inline_rounds = 400;
constexpr int inline_stride = 64;  // bytes of the receive area per round
struct inline_step {
  int size;
  int tag;
  bool plain_put_then_notify;  // dcuda_put, then dcuda_notify
};
__device__ inline_step inline_step_of(int round) {
  switch (round % 5) {
    case 0:  // carried in the record: four bytes, eight bytes, or with a continuation slot
      return {round % 3 == 0 ? 4 : round % 3 == 1 ? 8 : 16, 0, false};
    case 1:
      return {64, 0, false};  // regular put_notify
    case 2:
      return {8, 0, true};  // regular put, then a notify
    case 3:
      return {3, 1, false};  // carried, other tag
    default:                 // carried: one byte, or two aligned ones
      return {(round / 5) % 2 == 0 ? 1 : 2, 0, false};
  }
}

__global__ void inline_order_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  // Window: [send: inline_stride][receive: inline_rounds rounds][after the barrier: 4 bytes]
  unsigned char* window = run->memory + here.device_rank * run->per_rank;
  unsigned char* receive = window + inline_stride;
  unsigned char* late = receive + inline_rounds * inline_stride;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(run->per_rank), &win);
  const int target = here.next_gpu_peer, source = here.previous_gpu_peer;
  int wrong = 0;
  for (int round = 0; round < inline_rounds; ++round) {
    const inline_step step = inline_step_of(round);
    fill(window, static_cast<std::uint64_t>(step.size), here.rank, round);
    const int offset = inline_stride + round * inline_stride;
    if (step.plain_put_then_notify) {
      dcuda_put(gst, win, target, offset, step.size, window);
      dcuda_notify(gst, target, DCUDA_COMM_WORLD, step.tag);
    } else {
      dcuda_put_notify(gst, win, target, offset, step.size, window, step.tag);
    }
  }
  // In issue order: when the notification of round k is counted, the data of round k is there.
  for (int round = 0; round < inline_rounds; ++round) {
    const inline_step step = inline_step_of(round);
    dcuda_wait_notifications(gst, step.tag, 1);
    wrong += wrong_bytes(receive + round * inline_stride, static_cast<std::uint64_t>(step.size),
                         source, round);
  }
  // A put_notify before a barrier has landed after it, without a wait for its notification.
  fill(window, 4, here.rank, inline_rounds);
  dcuda_put_notify(gst, win, target, inline_stride + inline_rounds * inline_stride, 4, window, 2);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  wrong += wrong_bytes(late, 4, source, inline_rounds);
  dcuda_wait_notifications(gst, 2, 1);
  // Nothing more has arrived on any tag used.
  const int extra = dcuda_test_notifications(gst, 0, 1) + dcuda_test_notifications(gst, 1, 1) +
                    dcuda_test_notifications(gst, 2, 1);
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  if (threadIdx.x == 0 && extra != 0) atomicAdd(&run->count_errors, extra);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(carried_and_regular_notifications_to_one_target_keep_issue_order) {
  const std::uint64_t per_rank = inline_stride + inline_rounds * inline_stride + inline_stride;
  process_memory memory(ranks_per_device * per_rank);
  run_data data{memory.data, per_rank, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(inline_order_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  DCUDA_CHECK_EQ(data.count_errors, 0);
}

// ---- notifications counted without a record, between ring records (peer path) ----

// Every rank sends to its counterpart in the next process and receives from the one in the
// previous process. Each round: a 64-byte put_notify (counted in the target ring's counters
// when the target has taken every record of the sending GPU, a fenced record otherwise) and an
// 8-byte one (a ring record, fenced after a count), in one order or the other, on tags 0 and 1;
// then the receiver waits for the second, finds the first already there (issue order across the
// two ways of counting), checks both payloads and acknowledges on tag 2, and the next round
// begins once the sender has the acknowledgement, so that the ring is taken again.
constexpr int counted_rounds = 64;
constexpr int counted_stride = 128;  // bytes of the receive area per round: [first: 64][second]
__global__ void counted_order_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  // Window: [send: 64][receive: counted_rounds rounds]
  unsigned char* window = run->memory + here.device_rank * run->per_rank;
  unsigned char* receive = window + 64;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(run->per_rank), &win);
  const int target = here.next_gpu_peer, source = here.previous_gpu_peer;
  int wrong = 0, out_of_order = 0;
  for (int round = 0; round < counted_rounds; ++round) {
    const bool large_first = round % 2 == 0;
    const int first_size = large_first ? 64 : 8, second_size = large_first ? 8 : 64;
    const int at = 64 + round * counted_stride;
    fill(window, 64, here.rank, round);  // both payloads are prefixes of the same bytes
    dcuda_put_notify(gst, win, target, at, first_size, window, 0);
    dcuda_put_notify(gst, win, target, at + 64, second_size, window, 1);
    dcuda_wait_notifications(gst, 1, 1);
    if (dcuda_test_notifications(gst, 0, 1) == 0) {
      ++out_of_order;
      dcuda_wait_notifications(gst, 0, 1);
    }
    unsigned char* got = receive + round * counted_stride;
    wrong += wrong_bytes(got, static_cast<std::uint64_t>(first_size), source, round) +
             wrong_bytes(got + 64, static_cast<std::uint64_t>(second_size), source, round);
    dcuda_notify(gst, source, DCUDA_COMM_WORLD, 2);
    dcuda_wait_notifications(gst, 2, 1);
  }
  const int extra = dcuda_test_notifications(gst, 0, 1) + dcuda_test_notifications(gst, 1, 1) +
                    dcuda_test_notifications(gst, 2, 1);
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  if (threadIdx.x == 0 && out_of_order + extra != 0) {
    atomicAdd(&run->count_errors, out_of_order + extra);
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(counted_and_recorded_notifications_to_one_target_keep_issue_order) {
  const std::uint64_t per_rank = 64 + std::uint64_t{counted_rounds} * counted_stride;
  process_memory memory(ranks_per_device * per_rank);
  run_data data{memory.data, per_rank, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(counted_order_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  DCUDA_CHECK_EQ(data.count_errors, 0);
}

// ---- what a plain put or a count leaves owed to one target outlives a record to another ----

// Every rank sends, each round, to two ranks of the next process: T1, its counterpart, and T2,
// the next rank of that GPU. First 64 bytes into T1's window, by a plain dcuda_put (odd rounds)
// or a put_notify on tag 3 (even rounds: counted where T1 has taken every record of this GPU);
// then a notify to T2 on tag 1 (a fenced record: it pays the sender's fence); then an 8-byte
// put_notify to T1 on tag 0, carried in its record. T1 waits for tag 0 alone and must find the
// 64 bytes of this round, not the previous round's still cached by its block: the carried record
// has to make T1 acquire although the fenced record went to another target. It acknowledges on
// tag 2, and the next round begins once the sender has the acknowledgement.
constexpr int owed_rounds = 64;
constexpr int owed_stride = 128;  // bytes of the receive area per round: [put: 64][carried: 8]
__global__ void owed_acquire_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  int device_size = 0;
  dcuda_comm_size(gst, DCUDA_COMM_DEVICE, &device_size);
  // Window: [send: 64][receive: one area of owed_stride bytes, reused every round]
  unsigned char* window = run->memory + here.device_rank * run->per_rank;
  unsigned char* receive = window + 64;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, static_cast<int>(run->per_rank), &win);
  const int first_target = here.next_gpu_peer, source = here.previous_gpu_peer;
  const int second_target =
      here.next_gpu_peer - here.device_rank + (here.device_rank + 1) % device_size;
  int wrong = 0, count_errors = 0;
  for (int round = 0; round < owed_rounds; ++round) {
    const bool counted = round % 2 == 0;
    fill(window, 64, here.rank, round);
    if (counted) {
      dcuda_put_notify(gst, win, first_target, 64, 64, window, 3);
    } else {
      dcuda_put(gst, win, first_target, 64, 64, window);
    }
    dcuda_notify(gst, second_target, DCUDA_COMM_WORLD, 1);
    dcuda_put_notify(gst, win, first_target, 64 + 64, 8, window, 0);
    dcuda_wait_notifications(gst, 0, 1);
    // Read this round's bytes right after the carried notification, before any other wait.
    wrong += wrong_bytes(receive, 64, source, round) + wrong_bytes(receive + 64, 8, source, round);
    if (counted && dcuda_test_notifications(gst, 3, 1) == 0) {
      ++count_errors;  // the counted put_notify came before the carried one
      dcuda_wait_notifications(gst, 3, 1);
    }
    dcuda_wait_notifications(gst, 1, 1);
    dcuda_notify(gst, source, DCUDA_COMM_WORLD, 2);
    dcuda_wait_notifications(gst, 2, 1);
  }
  for (const int tag : {0, 1, 2, 3}) count_errors += dcuda_test_notifications(gst, tag, 1);
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  if (threadIdx.x == 0 && count_errors != 0) atomicAdd(&run->count_errors, count_errors);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(a_carried_record_after_a_record_to_another_target_still_shows_earlier_puts) {
  const std::uint64_t per_rank = 64 + owed_stride;
  process_memory memory(ranks_per_device * per_rank);
  run_data data{memory.data, per_rank, process_index(), 0, 0, {}};
  gpu_test::run_dcuda(owed_acquire_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  DCUDA_CHECK_EQ(data.count_errors, 0);
}

// ---- typed puts across GPUs: the peer path, or the network path where it is forced ----

namespace {

constexpr int typed_n = 64;  // each rank's source and targets are typed_n x typed_n doubles
constexpr double typed_never_written = -1.0;

struct typed_run {
  unsigned char* memory;  // [ranks_per_device][3][typed_n * typed_n doubles]
  dcuda_datatype column;  // one column, resized to one double: typed_n of them are the transpose
  int mismatches;
};

__device__ double typed_value(int rank, int element) {
  return rank * 1.0e6 + element;
}

// Every rank puts its matrix transposed (source: typed_n columns; target: contiguous) into the
// same rank of the next GPU twice: with dcuda_put_notify_typed into the first area, and with
// dcuda_put_typed followed by dcuda_notify into the second (a plain put to a peer leaves its fence
// to the next record; on the network path the notify must not overtake the pieces). The receiver
// checks both after its waits, in the kernel: the notification must not overtake the data.
__global__ void typed_transpose_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  typed_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  constexpr int elements = typed_n * typed_n;
  auto* window = reinterpret_cast<double*>(run->memory) +
                 static_cast<std::size_t>(here.device_rank) * 3 * elements;
  for (int i = static_cast<int>(threadIdx.x); i < elements; i += static_cast<int>(blockDim.x)) {
    window[i] = typed_value(here.rank, i);
    window[elements + i] = typed_never_written;
    window[2 * elements + i] = typed_never_written;
  }
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, 3 * elements * static_cast<int>(sizeof(double)),
                   &win);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every target area is cleared before any put
  constexpr int area = elements * static_cast<int>(sizeof(double));
  dcuda_put_notify_typed(gst, win, here.next_gpu_peer, area, elements, DCUDA_DOUBLE, window,
                         typed_n, run->column, 3);
  dcuda_put_typed(gst, win, here.next_gpu_peer, 2 * area, elements, DCUDA_DOUBLE, window, typed_n,
                  run->column);
  dcuda_notify(gst, here.next_gpu_peer, DCUDA_COMM_WORLD, 4);
  dcuda_wait_notifications(gst, 3, 1);
  dcuda_wait_notifications(gst, 4, 1);
  int wrong = 0;
  for (int i = static_cast<int>(threadIdx.x); i < elements; i += static_cast<int>(blockDim.x)) {
    const int column = i / typed_n, row = i % typed_n;
    const double expected = typed_value(here.previous_gpu_peer, row * typed_n + column);
    if (window[elements + i] != expected) ++wrong;
    if (window[2 * elements + i] != expected) ++wrong;
  }
  if (wrong != 0) atomicAdd(&run->mismatches, wrong);
  // Nobody frees its window while a put to it may still come.
  dcuda_win_flush(gst, win);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(typed_puts_cross_to_the_next_gpu_transposed) {
  const std::uint64_t per_rank = 3 * typed_n * typed_n * sizeof(double);
  process_memory memory(ranks_per_device * per_rank);
  dcuda_datatype column_type;
  dcuda_type_vector(typed_n, 1, typed_n, DCUDA_DOUBLE, &column_type);
  typed_run data{memory.data, {}, 0};
  dcuda_type_resized(column_type, 0, sizeof(double), &data.column);
  dcuda_type_commit(&data.column);
  gpu_test::run_dcuda(typed_transpose_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  dcuda_type_free(&data.column);
  dcuda_type_free(&column_type);
}

namespace {

// A lower triangle of a matrix of triangle_n x triangle_n doubles (an indexed type: row i holds
// i + 1 values) is more than one network piece of the default chunk (1 MiB), so on the network
// path it travels as several pieces, its layout (listed runs) sent ahead of them.
constexpr int triangle_n = 640;

struct triangle_run {
  unsigned char* memory;  // device rank 0's: [2][triangle_n * triangle_n doubles]
  dcuda_datatype triangle;
  int mismatches;
  int untouched_written;  // bytes outside the triangle that the put wrote
};

// Device rank 0 of every GPU puts its matrix's lower triangle into the same place of the next
// GPU's second matrix, notified; the receiver checks the triangle and that every value above it
// is still the one it wrote before.
__global__ void typed_triangle_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  triangle_run* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  constexpr int elements = triangle_n * triangle_n;
  const bool mine = here.device_rank == 0;
  auto* window = mine ? reinterpret_cast<double*>(run->memory) : nullptr;
  for (int i = static_cast<int>(threadIdx.x); mine && i < elements;
       i += static_cast<int>(blockDim.x)) {
    window[i] = typed_value(here.rank, i);
    window[elements + i] = typed_never_written;
  }
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window,
                   mine ? 2 * elements * static_cast<int>(sizeof(double)) : 0, &win);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  if (mine) {
    dcuda_put_notify_typed(gst, win, here.next_gpu_peer,
                           elements * static_cast<int>(sizeof(double)), 1, run->triangle, window, 1,
                           run->triangle, 5);
    dcuda_wait_notifications(gst, 5, 1);
    int wrong = 0, written = 0;
    for (int i = static_cast<int>(threadIdx.x); i < elements; i += static_cast<int>(blockDim.x)) {
      const int row = i / triangle_n, column = i % triangle_n;
      const double got = window[elements + i];
      if (column <= row) {
        if (got != typed_value(here.previous_gpu_peer, i)) ++wrong;
      } else if (got != typed_never_written) {
        ++written;
      }
    }
    if (wrong != 0) atomicAdd(&run->mismatches, wrong);
    if (written != 0) atomicAdd(&run->untouched_written, written);
    dcuda_win_flush(gst, win);
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

}  // namespace

DCUDA_TEST(typed_triangles_cross_in_pieces) {
  process_memory memory(2 * std::uint64_t{triangle_n} * triangle_n * sizeof(double));
  std::vector<int> lengths(triangle_n), displacements(triangle_n);
  for (int row = 0; row < triangle_n; ++row) {
    lengths[static_cast<std::size_t>(row)] = row + 1;
    displacements[static_cast<std::size_t>(row)] = row * triangle_n;
  }
  triangle_run data{memory.data, {}, 0, 0};
  dcuda_type_indexed(triangle_n, lengths.data(), displacements.data(), DCUDA_DOUBLE,
                     &data.triangle);
  dcuda_type_commit(&data.triangle);
  gpu_test::run_dcuda(typed_triangle_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  DCUDA_CHECK_EQ(data.untouched_written, 0);
  dcuda_type_free(&data.triangle);
}

// ---- thread-scoped calls across processes ----

// Thread 0 of every rank sends to its counterpart in the next process, by the thread-scoped
// calls and mixed with rank calls, on tags 0-2: every size a thread put takes (offsets aligned to
// 2 bytes only), a plain thread put then a thread notify (the peer path's owed fence), and a rank
// put of 1000 bytes then a thread notify (the rank call's barrier orders the block's stores
// before thread 0's notification). The receiver waits with thread 0 alone for tags 0 and 1, the
// block checks their bytes after its own barrier, then the same for tag 2; a thread test finds
// nothing more.
constexpr int thread_call_sizes = 16;  // DCUDA_THREAD_PUT_LIMIT
constexpr int thread_call_stride = 32;
constexpr int thread_call_block_put = 1000;
// The window: [send: thread_call_block_put + 1][receive: round `size` at 1 + size * stride]
// [plain thread put: stride][block put].
constexpr int thread_call_receive = thread_call_block_put + 1;
constexpr int thread_call_plain =
    thread_call_receive + 1 + (thread_call_sizes + 1) * thread_call_stride;
constexpr int thread_call_block = thread_call_plain + thread_call_stride;
constexpr int thread_call_window = thread_call_block + thread_call_block_put;
static_assert(thread_call_sizes == DCUDA_THREAD_PUT_LIMIT);

__global__ void thread_call_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  unsigned char* window = run->memory + here.device_rank * run->per_rank;
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, window, thread_call_window, &win);
  const int target = here.next_gpu_peer, source = here.previous_gpu_peer;
  constexpr int plain_offset = thread_call_plain;
  constexpr int block_offset = thread_call_block;
  fill(window, thread_call_block_put, here.rank, 0);  // ends with a block barrier
  if (threadIdx.x == 0) {
    for (int size = 1; size <= thread_call_sizes; ++size) {
      dcuda_put_notify_thread(gst, win, target, thread_call_receive + 1 + size * thread_call_stride,
                              size, window + size, 0);
    }
    dcuda_put_thread(gst, win, target, plain_offset, 8, window + 3);
    dcuda_notify_thread(gst, target, DCUDA_COMM_WORLD, 1);
  }
  dcuda_put(gst, win, target, block_offset, thread_call_block_put, window);
  if (threadIdx.x == 0) {
    dcuda_notify_thread(gst, target, DCUDA_COMM_WORLD, 2);
    // Tags 0 and 1 first: their bytes are checked before tag 2 is consumed, so that the fence
    // tag 2's notification pays for the rank put does not stand in for tag 1's.
    dcuda_wait_notifications_thread(gst, 0, thread_call_sizes);
    dcuda_wait_notifications_thread(gst, 1, 1);
  }
  __syncthreads();  // thread 0 acquired the data; the barrier shows it to the block
  int wrong = 0;
  for (int size = 1; size <= thread_call_sizes; ++size) {
    const unsigned char* landed = window + thread_call_receive + 1 + size * thread_call_stride;
    for (int i = static_cast<int>(threadIdx.x); i < thread_call_stride; i += blockDim.x) {
      const unsigned char expected =
          i < size ? pattern(source, static_cast<std::uint64_t>(size + i), 0) : 0;
      if (landed[i] != expected) ++wrong;
    }
  }
  wrong = __syncthreads_count(wrong);
  const unsigned char* plain = window + plain_offset;
  for (int i = static_cast<int>(threadIdx.x); i < thread_call_stride; i += blockDim.x) {
    if (plain[i] != (i < 8 ? pattern(source, static_cast<std::uint64_t>(3 + i), 0) : 0)) ++wrong;
  }
  wrong = __syncthreads_count(wrong);
  if (threadIdx.x == 0) dcuda_wait_notifications_thread(gst, 2, 1);
  __syncthreads();
  wrong += wrong_bytes(window + block_offset, thread_call_block_put, source, 0);
  int extra = 0;
  if (threadIdx.x == 0) {
    extra = dcuda_test_notifications_thread(gst, 0, 1) +
            dcuda_test_notifications_thread(gst, 1, 1) + dcuda_test_notifications_thread(gst, 2, 1);
    if (wrong != 0) atomicAdd(&run->mismatches, wrong);
    if (extra != 0) atomicAdd(&run->count_errors, extra);
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(thread_scoped_puts_and_notifications_cross_in_issue_order) {
  process_memory memory(ranks_per_device * static_cast<std::size_t>(thread_call_window));
  run_data data{memory.data, static_cast<std::uint64_t>(thread_call_window), process_index(), 0, 0,
                {}};
  gpu_test::run_dcuda(thread_call_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  DCUDA_CHECK_EQ(data.count_errors, 0);
}

// ---- get and remote atomics across GPUs ----

// Every rank gets every size from the same rank of the next process (through NVLink on the peer
// path) and checks each byte where it lands, with the bytes past it untouched; then every rank
// adds to one word of world rank 0 (a rank call and a thread-scoped call each round) and swaps
// into one of the last rank, round after round, and puts through pointers to the same rank of
// the next process. Each value fetch_add hands out must be seen once over all processes, the
// swaps must form one chain, and the puts land whole. A get and an atomic reach the ranks of the
// node only: on the network path the case skips (faults.cu checks the error there).
__device__ constexpr int get_sizes[] = {1, 3, 8, 13, 16, 17, 100, 1024, 1025, 65537};
constexpr int get_largest = 65537;
constexpr int global_rounds = 20;
// After the data and the landing area, aligned for the 64-bit atomics.
constexpr std::uint64_t global_words_at = (2 * get_largest + 64 + 7) / 8 * 8;
// After the words: what the previous GPU's rank puts through pointers, [13 B][3 B][1025 B].
constexpr std::uint64_t global_puts_at = global_words_at + 64;
// Each rank's part starts on a 256-byte boundary, so that the words above are aligned in memory
// and not only within the window.
constexpr std::uint64_t global_part_bytes = (global_puts_at + 16 + 1025 + 64 + 255) / 256 * 256;

struct global_data {
  unsigned char* memory;  // [ranks_per_device][per_rank]: [data][landing][words]
  std::uint64_t per_rank;
  int* seen;  // [2 * world ranks * global_rounds]: values this process's fetch_adds got
  unsigned long long* swapped;  // [ranks_per_device * global_rounds]: what each swap found
  unsigned long long final_count;
  unsigned long long final_swap;
  int mismatches;
};

__global__ void global_access_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  global_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  int world_size = 0;
  dcuda_comm_size(gst, DCUDA_COMM_WORLD, &world_size);
  unsigned char* part = run->memory + here.device_rank * run->per_rank;
  unsigned char* landing = part + get_largest;
  fill(part, get_largest, here.rank, 3);
  dcuda_win win;
  dcuda_win_create(gst, DCUDA_COMM_WORLD, part, static_cast<int>(run->per_rank), &win);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every rank's pattern is in place
  const int source = here.next_gpu_peer;
  int wrong = 0;
  for (int k = 0; k < static_cast<int>(sizeof(get_sizes) / sizeof(get_sizes[0])); ++k) {
    const int bytes = get_sizes[k];
    dcuda_get(gst, win, source, 0, bytes, landing);
    const int checked = bytes + 32 < get_largest ? bytes + 32 : get_largest;
    for (int i = static_cast<int>(threadIdx.x); i < checked; i += blockDim.x) {
      const unsigned char expected =
          i < bytes ? pattern(source, static_cast<std::uint64_t>(i), 3) : 0;
      if (landing[i] != expected) ++wrong;
    }
    // Each thread clears what it checked; the next get's entry barrier orders that before it lands.
    for (int i = static_cast<int>(threadIdx.x); i < checked; i += blockDim.x) landing[i] = 0;
    __syncthreads();
  }
  wrong = __syncthreads_count(wrong != 0);
  const dcuda_gptr counter = dcuda_gptr_of(win, 0, global_words_at);
  const dcuda_gptr swap_word = dcuda_gptr_of(win, world_size - 1, global_words_at + 8);
  unsigned long long last_swapped = 0;
  for (int round = 0; round < global_rounds; ++round) {
    const unsigned long long value = dcuda_atomic_fetch_add(gst, counter, 1ull);
    if (threadIdx.x == 0 &&
        value < static_cast<unsigned long long>(2 * world_size * global_rounds)) {
      atomicAdd(&run->seen[value], 1);
    }
    // The thread-scoped fetch-add draws from the same counter.
    if (threadIdx.x == 0) {
      const unsigned long long by_thread = dcuda_atomic_fetch_add_thread(gst, counter, 1ull);
      if (by_thread < static_cast<unsigned long long>(2 * world_size * global_rounds)) {
        atomicAdd(&run->seen[by_thread], 1);
      }
    }
    // Every value swapped in is unique: rank * rounds + round + 1.
    last_swapped = dcuda_atomic_swap(
        gst, swap_word, static_cast<unsigned long long>(here.rank * global_rounds + round + 1));
    if (threadIdx.x == 0) {
      run->swapped[here.device_rank * global_rounds + round] = last_swapped;
    }
  }
  // Puts through pointers to the same rank of the next GPU: 13 bytes (carried in the peer ring)
  // and 1025 bytes (copied by the block), each notified.
  const dcuda_gptr put_area = dcuda_gptr_of(win, here.next_gpu_peer, global_puts_at);
  dcuda_put_notify_gptr(gst, put_area, 13, part, 4);
  dcuda_put_notify_gptr(gst, dcuda_gptr_add(gst, put_area, 16), 1025, part + 100, 4);
  dcuda_wait_notifications(gst, 4, 2);
  int put_wrong = 0;
  for (int i = static_cast<int>(threadIdx.x); i < 16 + 1025 + 64; i += blockDim.x) {
    const int from = here.previous_gpu_peer;
    const unsigned char expected =
        i < 13
            ? pattern(from, static_cast<std::uint64_t>(i), 3)
            : (i >= 16 && i < 16 + 1025 ? pattern(from, static_cast<std::uint64_t>(100 + i - 16), 3)
                                        : 0);
    if (part[global_puts_at + i] != expected) ++put_wrong;
  }
  wrong += __syncthreads_count(put_wrong != 0);
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every atomic is done
  if (threadIdx.x == 0) {
    if (here.rank == 0) {
      run->final_count = *reinterpret_cast<volatile unsigned long long*>(part + global_words_at);
    }
    if (here.rank == world_size - 1) {
      run->final_swap = *reinterpret_cast<volatile unsigned long long*>(part + global_words_at + 8);
    }
    if (wrong != 0) atomicAdd(&run->mismatches, wrong);
  }
  dcuda_win_free(gst, win);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(get_and_atomics_cross_to_the_other_gpus) {
  const char* forced = std::getenv("DCUDA_FORCE_NETWORK");
  const char* emulated = std::getenv("DCUDA_EMULATE_NODES");
  if ((forced != nullptr && std::string(forced) == "1") ||
      (emulated != nullptr && std::atoi(emulated) > 1)) {
    throw dcuda_test::skip{
        "get and the remote atomics reach the ranks of one node; this run reaches the other "
        "processes through the network"};
  }
  const int processes = mpi_test::process_count();
  const int world = processes * ranks_per_device;
  const std::uint64_t per_rank = global_part_bytes;
  process_memory memory(ranks_per_device * per_rank);
  gpu_test::device_buffer<int> seen(static_cast<std::size_t>(2 * world) * global_rounds);
  gpu_test::device_buffer<unsigned long long> swapped(static_cast<std::size_t>(ranks_per_device) *
                                                      global_rounds);
  global_data data{memory.data, per_rank, seen.data, swapped.data, 0, 0, 0};
  gpu_test::run_dcuda(global_access_kernel, threads_per_rank, data, small_gpu,
                      shared_if_asked(memory.data));
  DCUDA_CHECK_EQ(data.mismatches, 0);
  // Every value fetch_add handed out, over all processes, exactly once.
  std::vector<int> counts = seen.read();
  MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_INT, MPI_SUM,
                MPI_COMM_WORLD);
  for (int v = 0; v < 2 * world * global_rounds; ++v) DCUDA_CHECK_EQ(counts[v], 1);
  unsigned long long final_count = data.final_count, final_swap = data.final_swap;
  MPI_Allreduce(MPI_IN_PLACE, &final_count, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &final_swap, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  DCUDA_CHECK_EQ(final_count, static_cast<unsigned long long>(2 * world * global_rounds));
  // The swaps form one chain: what they found, with the final value, is 0 and every value
  // swapped in, each once.
  std::vector<unsigned long long> found = swapped.read();
  std::vector<unsigned long long> all(static_cast<std::size_t>(world) * global_rounds);
  MPI_Allgather(found.data(), static_cast<int>(found.size()), MPI_UNSIGNED_LONG_LONG, all.data(),
                static_cast<int>(found.size()), MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
  all.push_back(final_swap);
  std::sort(all.begin(), all.end());
  for (std::size_t i = 0; i < all.size(); ++i) {
    DCUDA_CHECK_EQ(all[i], static_cast<unsigned long long>(i));
  }
}

// ---- heaps: blocks of every rank's heap reached from the other GPUs ----

// Every rank tells the same rank of the previous GPU, through a team-aligned window of
// DCUDA_COMM_WORLD (dcuda_win_allocate), where its inbox and its counter are in its heap; that
// rank then puts a message into the inbox through the pointer, on any path, and on the node also
// gets the message back and counts on the counter with both kinds of fetch-add. All memory comes
// from the heaps and goes back to them.
constexpr int heap_message_bytes = 1000;
constexpr int heap_inbox_bytes = 2048;
constexpr int heap_rounds = 10;

struct heap_cross_data {
  int mismatches;
  int on_node;  // 1: get and the atomics too
};

__global__ void heap_cross_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  heap_cross_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  const place here = locate(gst);
  // The directory: [0, 48) this rank's own pointers (inbox, outbox, counter), [64, 112) what the
  // next GPU's rank sent of its own.
  void* directory_base = nullptr;
  dcuda_win directory = DCUDA_WIN_NONE;
  dcuda_win_allocate(gst, DCUDA_COMM_WORLD, 128, &directory_base, &directory);
  auto* own = static_cast<dcuda_gptr*>(directory_base);
  const dcuda_gptr inbox = dcuda_malloc(gst, heap_inbox_bytes);
  const dcuda_gptr outbox = dcuda_malloc(gst, heap_message_bytes);
  const dcuda_gptr counter = dcuda_malloc(gst, 8);
  auto* inbox_bytes = static_cast<unsigned char*>(dcuda_gptr_address(gst, inbox));
  auto* outbox_bytes = static_cast<unsigned char*>(dcuda_gptr_address(gst, outbox));
  for (int i = static_cast<int>(threadIdx.x); i < heap_inbox_bytes; i += blockDim.x) {
    inbox_bytes[i] = 0xee;
    if (i < heap_message_bytes) {
      outbox_bytes[i] = pattern(here.rank, static_cast<std::uint64_t>(i), 5);
    }
  }
  if (threadIdx.x == 0) {
    *static_cast<unsigned long long*>(dcuda_gptr_address(gst, counter)) = 0;
    own[0] = inbox;
    own[1] = outbox;
    own[2] = counter;
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // counters cleared before anyone counts
  dcuda_put_notify(gst, directory, here.previous_gpu_peer, 64, 48, own, 7);
  dcuda_wait_notifications(gst, 7, 1);
  const dcuda_gptr next_inbox = own[4];
  const dcuda_gptr next_outbox = own[5];
  const dcuda_gptr next_counter = own[6];
  int wrong = 0;
  if (threadIdx.x == 0 && (next_inbox.unit != here.next_gpu_peer ||
                           next_inbox.window != DCUDA_WIN_HEAP || next_counter.offset % 256 != 0)) {
    ++wrong;
  }
  dcuda_put_notify_gptr(gst, next_inbox, heap_message_bytes, outbox_bytes, 8);
  dcuda_wait_notifications(gst, 8, 1);
  for (int i = static_cast<int>(threadIdx.x); i < heap_inbox_bytes; i += blockDim.x) {
    const unsigned char expected =
        i < heap_message_bytes ? pattern(here.previous_gpu_peer, static_cast<std::uint64_t>(i), 5)
                               : 0xee;
    if (inbox_bytes[i] != expected) ++wrong;
  }
  if (run->on_node != 0) {
    dcuda_get_gptr(gst, next_outbox, heap_message_bytes, inbox_bytes + 1024);
    for (int i = static_cast<int>(threadIdx.x); i < heap_message_bytes; i += blockDim.x) {
      if (inbox_bytes[1024 + i] != pattern(here.next_gpu_peer, static_cast<std::uint64_t>(i), 5)) {
        ++wrong;
      }
    }
    for (int round = 0; round < heap_rounds; ++round) {
      dcuda_atomic_fetch_add(gst, next_counter, 1ull);
      if (threadIdx.x == 0) dcuda_atomic_fetch_add_thread(gst, next_counter, 2ull);
    }
  }
  dcuda_comm_barrier(gst, DCUDA_COMM_WORLD);  // every message read, every count made
  if (threadIdx.x == 0 && run->on_node != 0 &&
      *static_cast<volatile unsigned long long*>(dcuda_gptr_address(gst, counter)) !=
          3ull * heap_rounds) {
    ++wrong;
  }
  wrong = __syncthreads_count(wrong != 0);
  dcuda_free(gst, counter);
  dcuda_free(gst, outbox);
  dcuda_free(gst, inbox);
  dcuda_win_free(gst, directory);
  // Everything is back: the whole heap is one block again.
  const dcuda_gptr whole = dcuda_malloc(gst, 1u << 20);
  if (threadIdx.x == 0 && whole.offset != 0) ++wrong;
  dcuda_free(gst, whole);
  if (threadIdx.x == 0 && wrong != 0) atomicAdd(&run->mismatches, wrong);
  dcuda_gpu_finish(gst);
}

DCUDA_TEST(heap_blocks_cross_to_the_other_gpus) {
  const char* forced = std::getenv("DCUDA_FORCE_NETWORK");
  const char* emulated = std::getenv("DCUDA_EMULATE_NODES");
  const bool network = (forced != nullptr && std::string(forced) == "1") ||
                       (emulated != nullptr && std::atoi(emulated) > 1);
  heap_cross_data data{0, network ? 0 : 1};
  std::vector<std::string> arguments = small_gpu;
  arguments.push_back("--dcuda-heap-bytes=1048576");
  gpu_test::run_dcuda(heap_cross_kernel, threads_per_rank, data, arguments);
  DCUDA_CHECK_EQ(data.mismatches, 0);
}
