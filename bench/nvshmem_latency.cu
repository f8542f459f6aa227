// nvshmem_latency: NVSHMEM 3 on the same two GPUs, the anchor that dcuda's peer path is compared
// with (measured: 2.19 us one way for 4 B with 32 threads, 2.30 us with 512; put
// bandwidth 306 GB/s with 32 blocks, on 2 H200s). `mpirun -np 2 nvshmem_latency`, one process
// (PE) per GPU of one node. Built only when NVSHMEM is found (bench/CMakeLists.txt).
//
//   ping-pong  PE 0 sends `size` bytes (4 B .. 4 MiB) with nvshmemx_putmem_signal_nbi_block, the
//              signal set to the message number; PE 1 waits for it with nvshmem_signal_wait_until
//              (thread 0, then __syncthreads) and answers the same way. One block per GPU, 32
//              and 512 threads. PE 0 times repetitions of round trips with the GPU's global timer;
//              one way = round trip / 2, the median of 7 repetitions. Both check the bytes.
//   on-stream  each PE queues nvshmemx_putmem_signal_on_stream (the signal set to the message
//              number) and nvshmemx_signal_wait_until_on_stream on a stream, 100 round trips a
//              repetition queued before PE 0's stream starts (common/stream_ping_pong.h), beside
//              the same ping-pong from a copy and stream memory operations; the anchor of
//              host_stream_latency ($DCUDA_NVSHMEM_RESULT); `--on-stream-only` runs it alone.
//   get, fetch-add  PE 0's block of 512 threads gets 8 B .. 1 MiB from PE 1 with
//              nvshmemx_getmem_block (successive gets from other lines of 4 MiB: no get finds
//              an earlier one's lines in L1), or its thread 0 adds to a word of PE 1 with
//              nvshmem_uint64_atomic_fetch_add, then __syncthreads, back to back; time per call,
//              the median of 7 repetitions; beside reference/peer_access_floor.cuh (the same by
//              hand on CUDA IPC-mapped memory). The anchors of global_access_latency.
//   bandwidth  PE 0 runs 32 blocks of 512 threads; each puts `size`-byte messages
//              (nvshmemx_putmem_nbi_block) into its own slot of PE 1's memory, then
//              nvshmem_quiet. Payload GB/s from CUDA events around the kernel, the median of 7.
//
// References, same program run: peer_flag_ping_pong.cuh (the raw flag ping-pong through CUDA
// IPC, the same block size) and peer_memcpy_bandwidth.cuh (cudaMemcpyPeer of the bytes of one
// kernel's puts, at least 1 byte). The first column holds NVSHMEM's figures (JSON key "dcuda",
// "measured": "NVSHMEM"); remote_latency can show them beside dcuda's ($DCUDA_NVSHMEM_RESULT).
//
// NVSHMEM is initialised with a unique id that PE 0 creates and broadcasts over MPI
// (NVSHMEMX_INIT_WITH_UNIQUEID), so no NVSHMEM MPI bootstrap plugin is needed.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/device_payload.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/nvshmem_start.h"
#include "common/payload.cuh"
#include "common/statistics.h"
#include "common/stream_ping_pong.h"
#include "dcuda/detail/device/clock.cuh"
#include "reference/mpi_ping_pong.h"  // host_payload_byte and friends
#include "reference/peer_flag_ping_pong.cuh"
#include "reference/launch_floor.cuh"
#include "reference/peer_access_floor.cuh"
#include "reference/peer_memcpy_bandwidth.cuh"
#include "reference/stream_memop_ping_pong.h"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "nvshmem_latency";
constexpr int bandwidth_blocks = 32;
constexpr int bandwidth_threads = 512;

// As remote_latency's peer path: 20000 round trips, at most 128 MiB each way, at least 100.
int round_trips_for(std::size_t size) {
  return static_cast<int>(std::clamp<std::size_t>(128 * MiB / size, 100, 20000));
}
int warmup_for(int round_trips) {
  return std::max(round_trips / 10, 10);
}

struct ping_pong_args {
  unsigned char* send;     // symmetric: the payload
  unsigned char* receive;  // symmetric: where the other PE puts its payload
  std::uint64_t* signal;   // symmetric: the message number the other PE sets
  int size;
  int warmup;
  int iterations;
  int pe;                             // 0 sends first and times
  unsigned long long* repetition_ns;  // [repetitions], written by PE 0
  int* mismatches;
};

__global__ void ping_pong_kernel(ping_pong_args args) {
  const int peer = 1 - args.pe;
  fill_payload(args.send, static_cast<std::uint64_t>(args.size), args.pe);
  std::uint64_t message = 0;
  const auto send = [&] {
    nvshmemx_putmem_signal_nbi_block(args.receive, args.send, static_cast<std::size_t>(args.size),
                                     args.signal, message, NVSHMEM_SIGNAL_SET, peer);
  };
  const auto receive = [&] {
    if (threadIdx.x == 0) nvshmem_signal_wait_until(args.signal, NVSHMEM_CMP_GE, message);
    __syncthreads();
  };
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int round_trips = repetition < 0 ? args.warmup : args.iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < round_trips; ++i) {
      ++message;
      if (args.pe == 0) {
        send();
        receive();
      } else {
        receive();
        send();
      }
    }
    if (args.pe == 0 && threadIdx.x == 0 && repetition >= 0) {
      args.repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
  if (!block_holds_payload(args.receive, static_cast<std::uint64_t>(args.size), peer) &&
      threadIdx.x == 0) {
    *args.mismatches = 1;
  }
  __syncthreads();
  if (threadIdx.x == 0) nvshmem_quiet();
}

__global__ void put_bandwidth_kernel(unsigned char* destination, const unsigned char* source,
                                     std::size_t size, int iterations, int peer) {
  const std::size_t slot = static_cast<std::size_t>(blockIdx.x) * size;
  for (int i = 0; i < iterations; ++i) {
    nvshmemx_putmem_nbi_block(destination + slot, source + slot, size, peer);
  }
  __syncthreads();
  if (threadIdx.x == 0) nvshmem_quiet();
  __syncthreads();
}

// PE 0's gets of `size` bytes from PE 1 (size 0: 64-bit fetch-adds on PE 1's word), back to back,
// timed per repetition.
__global__ void access_kernel(unsigned char* landing, const unsigned char* source,
                              std::uint64_t* word, int size, int warmup, int iterations,
                              unsigned long long* repetition_ns, unsigned long long* sink) {
  std::uint64_t seen = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int calls = repetition < 0 ? warmup : iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < calls; ++i) {
      if (size == 0) {
        if (threadIdx.x == 0) seen += nvshmem_uint64_atomic_fetch_add(word, 1, 1);
      } else {
        nvshmemx_getmem_block(landing, source + get_offset(i, static_cast<std::size_t>(size)),
                              static_cast<std::size_t>(size), 1);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0 && repetition >= 0) {
      repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
  if (threadIdx.x == 0) *sink = seen;
}

// The symmetric memory of both tests, and the device words the ping-pong reports through.
class nvshmem_buffers {
 public:
  nvshmem_buffers()
      : repetition_ns_(repetitions * sizeof(unsigned long long)), mismatches_(sizeof(int)) {
    const std::size_t bytes = 2 * largest_message + 256 +
                              2 * static_cast<std::size_t>(bandwidth_blocks) * largest_message;
    base_ = static_cast<unsigned char*>(nvshmem_malloc(bytes));
    if (base_ == nullptr) {
      std::fprintf(stderr, "FAIL: %s: nvshmem_malloc of %zu bytes failed\n", benchmark, bytes);
      std::exit(1);
    }
  }
  ~nvshmem_buffers() { nvshmem_free(base_); }
  nvshmem_buffers(const nvshmem_buffers&) = delete;
  nvshmem_buffers& operator=(const nvshmem_buffers&) = delete;

  unsigned char* send() const { return base_; }
  unsigned char* receive() const { return base_ + largest_message; }
  std::uint64_t* signal() const {
    return reinterpret_cast<std::uint64_t*>(base_ + 2 * largest_message);
  }
  unsigned char* bandwidth_source() const { return base_ + 2 * largest_message + 256; }
  unsigned char* bandwidth_destination() const {
    return bandwidth_source() + static_cast<std::size_t>(bandwidth_blocks) * largest_message;
  }
  unsigned long long* repetition_ns() const { return repetition_ns_.get<unsigned long long>(); }
  int* mismatches() const { return mismatches_.get<int>(); }

 private:
  unsigned char* base_ = nullptr;
  device_bytes repetition_ns_;
  device_bytes mismatches_;
};

// One ping-pong of `size` bytes with one block of `threads` threads per GPU (collective).
ping_pong_result nvshmem_ping_pong(const mpi_world& world, const nvshmem_buffers& buffers,
                                   int threads, std::size_t size) {
  BENCH_CUDA_CHECK(cudaMemset(buffers.receive(), 0, size));
  BENCH_CUDA_CHECK(cudaMemset(buffers.signal(), 0, sizeof(std::uint64_t)));
  BENCH_CUDA_CHECK(cudaMemset(buffers.mismatches(), 0, sizeof(int)));
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();  // both signals are 0 before either PE starts

  const int round_trips = round_trips_for(size);
  ping_pong_args args{buffers.send(),         buffers.receive(),       buffers.signal(),
                      static_cast<int>(size), warmup_for(round_trips), round_trips,
                      world.process(),        buffers.repetition_ns(), buffers.mismatches()};
  ping_pong_kernel<<<1, static_cast<unsigned>(threads)>>>(args);
  BENCH_CUDA_CHECK(cudaGetLastError());
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<unsigned long long> nanoseconds(repetitions);
  int wrong = 0;
  BENCH_CUDA_CHECK(cudaMemcpy(nanoseconds.data(), buffers.repetition_ns(),
                              repetitions * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  BENCH_CUDA_CHECK(cudaMemcpy(&wrong, buffers.mismatches(), sizeof wrong, cudaMemcpyDeviceToHost));
  return {world.from_process0(median_one_way_us(nanoseconds, round_trips)), world.sum(wrong) == 0};
}

// Put bandwidth of 32 blocks, each putting `size`-byte messages, PE 0 -> PE 1 (collective).
// Returns GB/s on both PEs, and whether PE 1 received PE 0's bytes.
mpi_result nvshmem_put_bandwidth(const mpi_world& world, const nvshmem_buffers& buffers,
                                 std::size_t size, int iterations) {
  const std::size_t bytes = static_cast<std::size_t>(bandwidth_blocks) * size;
  std::vector<unsigned char> pattern(bytes);
  for (int block = 0; block < bandwidth_blocks; ++block) {
    fill_host_payload(pattern.data() + block * size, size, 0);
  }
  BENCH_CUDA_CHECK(
      cudaMemcpy(buffers.bandwidth_source(), pattern.data(), bytes, cudaMemcpyHostToDevice));
  BENCH_CUDA_CHECK(cudaMemset(buffers.bandwidth_destination(), 0, bytes));
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();

  double rate = 0;
  if (world.process() == 0) {
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    BENCH_CUDA_CHECK(cudaEventCreate(&start));
    BENCH_CUDA_CHECK(cudaEventCreate(&stop));
    const auto launch = [&] {
      put_bandwidth_kernel<<<bandwidth_blocks, bandwidth_threads>>>(
          buffers.bandwidth_destination(), buffers.bandwidth_source(), size, iterations, 1);
      BENCH_CUDA_CHECK(cudaGetLastError());
    };
    launch();  // warm-up
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> rates;
    for (int repetition = 0; repetition < repetitions; ++repetition) {
      BENCH_CUDA_CHECK(cudaEventRecord(start));
      launch();
      BENCH_CUDA_CHECK(cudaEventRecord(stop));
      BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
      float milliseconds = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
      rates.push_back(static_cast<double>(bytes) * iterations / (milliseconds * 1e-3) / 1e9);
    }
    cudaEventDestroy(stop);
    cudaEventDestroy(start);
    rate = median(rates);
  }
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();  // PE 0's puts are complete (quiet) before PE 1 looks
  bool wrong = false;
  if (world.process() == 1) {
    std::vector<unsigned char> received(bytes);
    BENCH_CUDA_CHECK(cudaMemcpy(received.data(), buffers.bandwidth_destination(), bytes,
                                cudaMemcpyDeviceToHost));
    for (int block = 0; block < bandwidth_blocks; ++block) {
      wrong = wrong || !host_holds_payload(received.data() + block * size, size, 0);
    }
  }
  return {world.from_process0(rate), !world.any(wrong)};
}

// One get of `size` bytes (0: one fetch-add) by PE 0's block of `threads` threads from PE 1,
// microseconds per call on both PEs (collective).
figure nvshmem_access_us(const mpi_world& world, const nvshmem_buffers& buffers, int threads,
                         std::size_t size) {
  BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  const int calls = size == 0 ? 20000 : round_trips_for(size);
  figure result{};
  if (world.process() == 0) {
    device_bytes sink(sizeof(unsigned long long));
    access_kernel<<<1, static_cast<unsigned>(threads)>>>(
        buffers.send(), buffers.receive(), buffers.signal() + 1, static_cast<int>(size),
        warmup_for(calls), calls, buffers.repetition_ns(), sink.get<unsigned long long>());
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned long long> nanoseconds(repetitions);
    BENCH_CUDA_CHECK(cudaMemcpy(nanoseconds.data(), buffers.repetition_ns(),
                                repetitions * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    std::vector<double> per_call_us;
    for (const unsigned long long ns : nanoseconds) {
      per_call_us.push_back(static_cast<double>(ns) / calls / 1000);
    }
    result = summary(per_call_us);
  }
  nvshmem_barrier_all();
  return world.from_process0(result);
}

// The get and fetch-add tables (collective), each beside the same by hand on IPC-mapped memory.
std::vector<table> access_tables(const mpi_world& world, const nvshmem_buffers& buffers) {
  constexpr int threads = 512;
  std::vector<std::size_t> sizes;
  for (std::size_t size = 8; size <= MiB; size *= 8) sizes.push_back(size);
  sizes.push_back(MiB);
  peer_access_floor floor(world, MiB);
  table get{"NVSHMEM get (nvshmemx_getmem_block), per call, one block of 512 threads, 2 PEs",
            "us",
            "peer load",
            "the same gets written by hand: one 512-thread block copies from the other GPU's "
            "memory (CUDA IPC-mapped) with loads that skip L1, thread 0 alone up to 16 B, then "
            "__syncthreads",
            2,
            threads,
            1,
            {}};
  for (const std::size_t size : sizes) {
    const figure nvshmem = nvshmem_access_us(world, buffers, threads, size);
    const int calls = round_trips_for(size);
    const figure reference = floor.run(threads, static_cast<int>(size), warmup_for(calls), calls);
    get.rows.push_back({size, nvshmem.median, reference.median, nvshmem.min, nvshmem.max});
  }
  table fetch_add{
      "NVSHMEM atomic fetch-add (nvshmem_uint64_atomic_fetch_add by thread 0, then "
      "__syncthreads), per call, one block of 512 threads, 2 PEs",
      "us",
      "peer atomic",
      "thread 0 of one 512-thread block: a relaxed system-scope fetch_add on the other "
      "GPU's word (CUDA IPC-mapped), then __syncthreads",
      2,
      threads,
      1,
      {}};
  const figure nvshmem = nvshmem_access_us(world, buffers, threads, 0);
  const figure reference = floor.run(threads, 0, 2000, 20000);
  fetch_add.rows.push_back({8, nvshmem.median, reference.median, nvshmem.min, nvshmem.max});
  return {get, fetch_add};
}

// The on-stream ping-pong (collective): each PE queues nvshmemx_putmem_signal_on_stream (the
// signal set to the message number) and nvshmemx_signal_wait_until_on_stream on a stream, as
// host_stream_latency queues dcuda's; beside the same ping-pong from a copy and stream memory
// operations (reference/stream_memop_ping_pong.h).
table on_stream_ping_pong(const mpi_world& world, const nvshmem_buffers& buffers,
                          const std::vector<std::size_t>& sizes) {
  cudaStream_t stream = nullptr;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  upload_payload(buffers.send(), largest_message, world.process());
  const auto holds_other_payload = [&](const unsigned char* received, std::size_t size) {
    return device_holds_payload(received, size, 1 - world.process());
  };
  stream_memop_ping_pong floor(world, largest_message);
  table results{
      "NVSHMEM on-stream ping-pong (nvshmemx_putmem_signal_on_stream + "
      "nvshmemx_signal_wait_until_on_stream), one way, 2 PEs",
      "us",
      "stream memop",
      "the same on-stream ping-pong from cudaMemcpyAsync into the other GPU (CUDA IPC) "
      "and cuStreamWriteValue32 of a flag there, cuStreamWaitValue32 on the own flag",
      2,
      0,
      0,
      {}};
  const int peer = 1 - world.process();
  bool arrived = true;
  for (const std::size_t size : sizes) {
    BENCH_CUDA_CHECK(cudaMemset(buffers.receive(), 0, size));
    BENCH_CUDA_CHECK(cudaMemset(buffers.signal(), 0, sizeof(std::uint64_t)));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    const figure nvshmem_us = stream_ping_pong_us(
        world, stream,
        [&](int message) {
          nvshmemx_putmem_signal_on_stream(buffers.receive(), buffers.send(), size,
                                           buffers.signal(), static_cast<std::uint64_t>(message),
                                           NVSHMEM_SIGNAL_SET, peer, stream);
        },
        [&](int message) {
          nvshmemx_signal_wait_until_on_stream(buffers.signal(), NVSHMEM_CMP_GE,
                                               static_cast<std::uint64_t>(message), stream);
        });
    arrived = arrived && holds_other_payload(buffers.receive(), size);
    const double floor_us =
        floor.run(stream, buffers.send(), size, [&](const unsigned char* received) {
          arrived = arrived && holds_other_payload(received, size);
        });
    results.rows.push_back({size, nvshmem_us.median, floor_us, nvshmem_us.min, nvshmem_us.max});
  }
  if (world.any(!arrived)) fail_job(benchmark, "on-stream ping-pong: wrong data received");
  cudaStreamDestroy(stream);
  return results;
}

// The message rate of queued nvshmemx_putmem_signal_on_stream (collective), as
// host_stream_latency measures dcuda's: PE 0 queues stream_batch_messages of them back to back
// (the signal set to the message number), PE 1 waits for the last one's signal and answers with
// nvshmemx_signal_op_on_stream; time per message, beside empty kernel launches.
table on_stream_message_rate(const mpi_world& world, const nvshmem_buffers& buffers) {
  owned_stream stream;
  upload_payload(buffers.send(), largest_message, world.process());
  const figure floor = launch_floor_us();
  table results{"NVSHMEM on-stream message rate (nvshmemx_putmem_signal_on_stream): " +
                    std::to_string(stream_batch_messages) +
                    " queued back to back on one stream, then one answer; time per message, "
                    "2 PEs",
                "us",
                "empty kernel",
                "an empty one-thread kernel launched " + std::to_string(stream_batch_messages) +
                    " times back to back on one stream, same run",
                2,
                0,
                1,
                {}};
  const int peer = 1 - world.process();
  bool arrived = true;
  for (const std::size_t size : {std::size_t{8}, std::size_t{1024}, std::size_t{65536}}) {
    BENCH_CUDA_CHECK(cudaMemset(buffers.receive(), 0, size));
    BENCH_CUDA_CHECK(cudaMemset(buffers.signal(), 0, sizeof(std::uint64_t)));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    std::uint64_t sent = 0;      // PE 0: signals set so far
    std::uint64_t expected = 0;  // PE 1: the signal that ends the current batch
    std::uint64_t answers = 0;
    const figure per_message = stream_batch_us(
        world, stream.get(),
        [&] {
          nvshmemx_putmem_signal_on_stream(buffers.receive(), buffers.send(), size,
                                           buffers.signal(), ++sent, NVSHMEM_SIGNAL_SET, peer,
                                           stream.get());
        },
        [&](int count) {
          expected += static_cast<std::uint64_t>(count);
          nvshmemx_signal_wait_until_on_stream(buffers.signal(), NVSHMEM_CMP_GE, expected,
                                               stream.get());
        },
        [&] {
          nvshmemx_signal_op_on_stream(buffers.signal(), ++answers, NVSHMEM_SIGNAL_SET, peer,
                                       stream.get());
        },
        [&] {
          nvshmemx_signal_wait_until_on_stream(buffers.signal(), NVSHMEM_CMP_GE, ++answers,
                                               stream.get());
        });
    if (world.process() == 1) {
      arrived = arrived && device_holds_payload(buffers.receive(), size, 0);
    }
    results.rows.push_back(
        {size, per_message.median, floor.median, per_message.min, per_message.max});
  }
  if (world.any(!arrived)) fail_job(benchmark, "on-stream message rate: wrong data received");
  return results;
}

// Puts per block and kernel: ~256 MiB over all blocks, 10 to 1000 puts.
int bandwidth_iterations_for(std::size_t size) {
  return static_cast<int>(std::clamp<std::size_t>(
      256 * MiB / (static_cast<std::size_t>(bandwidth_blocks) * size), 10, 1000));
}

}  // namespace

int main(int argc, char** argv) {
  // Before the first CUDA call: the on-stream ping-pong's waits hold their stream's hardware
  // queue, and with CUDA's 8 the queue of NVSHMEM's own streams may be behind one (it hung).
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "NVSHMEM putmem_signal ping-pong and put bandwidth between the GPUs of 2 processes (the "
      "anchor of dcuda's peer path); run it as mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;

  // The GPU dcuda would give this process: its index among the processes of its node.
  BENCH_CUDA_CHECK(cudaSetDevice(world.local_index()));
  require_distinct_gpus(world);

  start_nvshmem(world, benchmark);

  std::optional<report> out;
  if (world.prints()) {
    out.emplace(benchmark, command_line, current_device());
    out->set_measured_name("NVSHMEM");
  }
  const std::vector<std::size_t> sizes = message_sizes(4);
  // --on-stream-only: the on-stream table alone (the anchor of host_stream_latency).
  const bool on_stream_only =
      std::find(command_line.dcuda_arguments.begin(), command_line.dcuda_arguments.end(),
                "--on-stream-only") != command_line.dcuda_arguments.end();
  if (on_stream_only) {
    nvshmem_buffers buffers;
    const table on_stream = on_stream_ping_pong(world, buffers, sizes);
    const table rate = on_stream_message_rate(world, buffers);
    if (out) {
      out->print(on_stream);
      out->print(rate);
      out->write_json();
    }
  } else {
    nvshmem_buffers buffers;
    peer_flag_ping_pong flag_reference(world, largest_message);
    for (const int threads : {32, 512}) {
      table results{
          "NVSHMEM putmem_signal ping-pong (nvshmemx_putmem_signal_nbi_block + "
          "nvshmem_signal_wait_until), one way, one block of " +
              std::to_string(threads) + " threads per GPU, 2 PEs",
          "us",
          "peer flag",
          "flag ping-pong between one " + std::to_string(threads) +
              "-thread block on each GPU through CUDA IPC-mapped memory: payload copied "
              "with peer stores, system-scope release store of the counter; relaxed "
              "poll, then one acquire load",
          2,
          threads,
          2,
          {}};
      for (const std::size_t size : sizes) {
        const ping_pong_result nvshmem = nvshmem_ping_pong(world, buffers, threads, size);
        const int round_trips = round_trips_for(size);
        const ping_pong_result reference = flag_reference.run(threads, static_cast<int>(size),
                                                              warmup_for(round_trips), round_trips);
        if (!nvshmem.data_arrived || !reference.data_arrived) {
          fail_job(benchmark,
                   std::string(nvshmem.data_arrived ? "peer flag reference" : "NVSHMEM") +
                       ": wrong data received (" + std::to_string(size) + " B, " +
                       std::to_string(threads) + " threads)");
        }
        results.rows.push_back({size, nvshmem.one_way_us, reference.one_way_us});
      }
      if (out) out->print(results);
    }
    const table on_stream = on_stream_ping_pong(world, buffers, sizes);
    if (out) out->print(on_stream);
    const table rate = on_stream_message_rate(world, buffers);
    if (out) out->print(rate);
    for (const table& access : access_tables(world, buffers)) {
      if (out) out->print(access);
    }

    peer_memcpy_reference memcpy_reference(world, GiB);
    table bandwidth{"NVSHMEM put bandwidth (nvshmemx_putmem_nbi_block, then nvshmem_quiet), " +
                        std::to_string(bandwidth_blocks) + " blocks of " +
                        std::to_string(bandwidth_threads) +
                        " threads on PE 0, each putting messages of the size into its own slot "
                        "of PE 1",
                    "GB/s",
                    "cudaMemcpyPeer",
                    "cudaMemcpyAsync from GPU 0 into GPU 1's memory mapped with CUDA IPC (as "
                    "cudaMemcpyPeerAsync), copies of the bytes one kernel puts",
                    2,
                    bandwidth_threads,
                    0,
                    {}};
    for (const std::size_t size : message_sizes()) {
      const int iterations = bandwidth_iterations_for(size);
      const mpi_result nvshmem = nvshmem_put_bandwidth(world, buffers, size, iterations);
      if (!nvshmem.data_arrived) {
        fail_job(benchmark,
                 "NVSHMEM put bandwidth: wrong data received (" + std::to_string(size) + " B)");
      }
      const std::size_t copy_bytes =
          std::min(GiB, static_cast<std::size_t>(bandwidth_blocks) * size * iterations);
      bandwidth.rows.push_back(
          {size, nvshmem.value, memcpy_reference.gigabytes_per_second(copy_bytes)});
    }
    if (out) {
      out->print(bandwidth);
      out->write_json();
    }
  }
  nvshmem_finalize();
  return 0;
}
