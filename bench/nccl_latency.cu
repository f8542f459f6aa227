// nccl_latency: NCCL's device API (NCCL 2.28 or newer) on the same two GPUs, the second anchor
// that dcuda's peer path is compared with, beside NVSHMEM (nvshmem_latency). `mpirun -np 2
// nccl_latency`, one process (NCCL rank) per GPU of one node. Built only where NCCL with
// nccl_device.h is found (bench/CMakeLists.txt).
//
// Each rank registers one window of symmetric memory (ncclMemAlloc + ncclCommWindowRegister) and
// creates a device communicator (ncclDevCommCreate). One block of 512 threads per GPU ping-pongs
// messages of `size` bytes (1 B .. 4 MiB); rank 0 times repetitions of round trips with the GPU's
// global timer; one way = round trip / 2, the median of 7 repetitions. Both check the bytes.
//
//   flag     the sender's threads store the payload into the receiver's window through the LSA
//            (load/store access) pointer, ncclGetLsaPointer; after __syncthreads its thread 0
//            stores the message number into a flag in the receiver's window with a system-scope
//            release store. The receiver's thread 0 polls its own flag (ncclGetLocalPointer)
//            with system-scope acquire loads, then __syncthreads, and answers the same way.
//            NCCL 2.28's LSA module has no one-way signal; this is the store and the poll its
//            LSA barrier is made of (ncclLsaBarrierSession's arrive and wait), in one direction.
//   barrier  the same payload stores, each followed by ncclLsaBarrierSession::sync of both
//            blocks (acquire-release): NCCL's own synchronisation as the signal. A barrier needs
//            both sides, so the receiver arrives early and each message costs a barrier.
//
// Reference, same program run: peer_flag_ping_pong.cuh with the same block size (the flag
// protocol through memory mapped with CUDA IPC, polling with relaxed loads and one acquire at the
// end). The first column holds NCCL's figures (JSON key
// "dcuda", "measured": "NCCL <version of the library>"); remote_latency can show the flag figures
// beside dcuda's ($DCUDA_NCCL_RESULT).
//
// NCCL starts from a unique id that process 0 creates and broadcasts over MPI. Without NCCL 2.28's
// device API (another release of the library, no symmetric memory, a device communicator that
// cannot be created) or without load/store access between the 2 GPUs, it prints
// "SKIP: nccl_latency: <reason>" and exits with status 0.
#include <cuda/atomic>
#include <nccl.h>
#include <nccl_device.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/payload.cuh"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"
#include "reference/flag_ping_pong.cuh"
#include "reference/peer_flag_ping_pong.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "nccl_latency";
// One block per GPU, as dcuda's rank in remote_latency and NVSHMEM's anchor.
constexpr int threads = 512;

// Each rank's window, the same offsets on both (symmetric memory): the flag the other rank
// stores message numbers into (a line of its own), then [send: largest][receive: largest], where
// the other rank stores its payload.
constexpr std::size_t flag_offset = 0;
constexpr std::size_t send_offset = NCCL_WIN_REQUIRED_ALIGNMENT;
constexpr std::size_t receive_offset = send_offset + largest_message;
constexpr std::size_t window_bytes = receive_offset + largest_message;

// As nvshmem_latency and remote_latency's peer path: 20000 round trips, at most 128 MiB each
// way, at least 100.
int round_trips_for(std::size_t size) {
  return static_cast<int>(std::clamp<std::size_t>(128 * MiB / size, 100, 20000));
}
int warmup_for(int round_trips) {
  return std::max(round_trips / 10, 10);
}

enum class signal_kind { flag, barrier };

struct ping_pong_args {
  ncclDevComm comm;                   // by value: the LSA barrier reads it on the device
  ncclWindow_t window;                // this rank's window; device memory NCCL filled in
  int peer;                           // the other rank's index in the LSA team
  int rank;                           // 0 sends first and times
  int size;                           // payload bytes
  int warmup;                         // round trips before the first timed repetition
  int iterations;                     // round trips per repetition
  unsigned long long* repetition_ns;  // [repetitions], written by rank 0
  int* mismatches;                    // 1 when the received bytes were wrong
};

// The window's parts as this rank's block reaches them: its own memory, and the other rank's
// through the LSA mapping (NVLink load/store).
struct window_pointers {
  std::uint32_t* flag;          // mine: the other rank stores message numbers here
  std::uint32_t* peer_flag;     // the other rank's flag
  unsigned char* send;          // mine: the payload
  unsigned char* receive;       // mine: the other rank's payload lands here
  unsigned char* peer_receive;  // the other rank's receive area
};

__device__ window_pointers pointers_of(const ping_pong_args& args) {
  return {static_cast<std::uint32_t*>(ncclGetLocalPointer(args.window, flag_offset)),
          static_cast<std::uint32_t*>(ncclGetLsaPointer(args.window, flag_offset, args.peer)),
          static_cast<unsigned char*>(ncclGetLocalPointer(args.window, send_offset)),
          static_cast<unsigned char*>(ncclGetLocalPointer(args.window, receive_offset)),
          static_cast<unsigned char*>(ncclGetLsaPointer(args.window, receive_offset, args.peer))};
}

// Warm-up, then the timed repetitions of `round_trip` (all threads); rank 0 records each.
template <typename RoundTrip>
__device__ void time_round_trips(const ping_pong_args& args, RoundTrip round_trip) {
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const int round_trips = repetition < 0 ? args.warmup : args.iterations;
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int i = 0; i < round_trips; ++i) round_trip();
    if (args.rank == 0 && threadIdx.x == 0 && repetition >= 0) {
      args.repetition_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
}

__device__ void check_payload(const ping_pong_args& args, const window_pointers& window) {
  if (!block_holds_payload(window.receive, static_cast<std::uint64_t>(args.size), 1 - args.rank) &&
      threadIdx.x == 0) {
    *args.mismatches = 1;
  }
}

using system_flag = cuda::atomic_ref<std::uint32_t, cuda::thread_scope_system>;

__global__ void __launch_bounds__(threads, 1) flag_ping_pong_kernel(ping_pong_args args) {
  const window_pointers window = pointers_of(args);
  fill_payload(window.send, static_cast<std::uint64_t>(args.size), args.rank);
  std::uint32_t message = 0;
  const auto send = [&] {
    flag_ping_pong_detail::copy_block(window.peer_receive, window.send, args.size);
    // Every thread's stores into the other GPU's window happen before thread 0's release, which
    // makes them visible to whoever acquires the flag (the release is cumulative).
    __syncthreads();
    if (threadIdx.x == 0) {
      system_flag(*window.peer_flag).store(message, cuda::memory_order_release);
    }
  };
  const auto receive = [&] {
    // Every poll an acquire, as NCCL's LSA barrier waits (the reference polls relaxed and
    // acquires once): the load that reads the message number orders that message's payload
    // before the block's reads (the check) and its answer; __syncthreads passes the order on to
    // every thread.
    if (threadIdx.x == 0) {
      while (system_flag(*window.flag).load(cuda::memory_order_acquire) != message) {
      }
    }
    __syncthreads();
  };
  time_round_trips(args, [&] {
    ++message;
    if (args.rank == 0) {
      send();
      receive();
    } else {
      receive();
      send();
    }
  });
  check_payload(args, window);
}

__global__ void __launch_bounds__(threads, 1) barrier_ping_pong_kernel(ping_pong_args args) {
  const window_pointers window = pointers_of(args);
  fill_payload(window.send, static_cast<std::uint64_t>(args.size), args.rank);
  {
    // Barrier 0 of the LSA team (both ranks). Its epoch lives in NCCL's resource window from one
    // kernel to the next; both ranks sync as often in every kernel, so the epochs stay equal.
    ncclLsaBarrierSession<ncclCoopCta> barrier(ncclCoopCta(), args.comm, ncclTeamTagLsa(), 0);
    // sync = arrive (__syncthreads, then a release store into the other rank's inbox) + wait
    // (acquire loads of its own inbox, then __syncthreads): the payload stored before a sync is
    // visible to the other rank after it.
    time_round_trips(args, [&] {
      if (args.rank == 0) {
        flag_ping_pong_detail::copy_block(window.peer_receive, window.send, args.size);
      }
      barrier.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
      if (args.rank == 1) {
        flag_ping_pong_detail::copy_block(window.peer_receive, window.send, args.size);
      }
      barrier.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
    });
  }  // the session stores its epoch back for the next kernel
  check_payload(args, window);
}

std::string nccl_failure(const char* call, ncclResult_t result) {
  std::string text = std::string(call) + ": " + ncclGetErrorString(result);
  const char* detail = ncclGetLastError(nullptr);
  if (detail != nullptr && detail[0] != '\0') text += " (" + std::string(detail) + ")";
  return text;
}

// The first non-empty reason among the processes, on every process (collective), named after
// the process that gave it; "" when there is none.
std::string first_reason(const mpi_world& world, const std::string& mine) {
  int candidate = mine.empty() ? world.processes() : world.process();
  int first = 0;
  world.check(MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, world.comm()),
              "MPI_Allreduce");
  if (first == world.processes()) return "";
  int length = world.process() == first ? static_cast<int>(mine.size()) : 0;
  world.check(MPI_Bcast(&length, 1, MPI_INT, first, world.comm()), "MPI_Bcast");
  std::string text = world.process() == first ? mine : std::string(length, ' ');
  world.check(MPI_Bcast(text.data(), length, MPI_CHAR, first, world.comm()), "MPI_Bcast");
  return "process " + std::to_string(first) + ": " + text;
}

// NCCL's communicator, the window and the device communicator; torn down in reverse, on both
// processes alike (ncclCommWindowDeregister and ncclDevCommDestroy are collective).
class nccl_resources {
 public:
  nccl_resources() = default;
  ~nccl_resources() {
    if (device_comm_created) ncclDevCommDestroy(comm, &device_comm);
    if (window != nullptr) ncclCommWindowDeregister(comm, window);
    if (base != nullptr) ncclMemFree(base);
    if (comm != nullptr) {
      ncclCommFinalize(comm);
      ncclCommDestroy(comm);
    }
  }
  nccl_resources(const nccl_resources&) = delete;
  nccl_resources& operator=(const nccl_resources&) = delete;

  ncclComm_t comm = nullptr;
  void* base = nullptr;  // the window's memory (ncclMemAlloc)
  ncclWindow_t window = nullptr;
  ncclDevComm device_comm{};
  bool device_comm_created = false;
};

// The version number NCCL gives (e.g. 22809) as text ("2.28.9").
std::string version_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
         std::to_string(code % 100);
}

// Why this process cannot run the benchmark before NCCL starts, or "": a library without the
// device API, or of another release than the headers this program was built with, or a GPU that
// cannot load from and store to the other.
std::string reason_before_nccl(const mpi_world& world, int library_version) {
  if (library_version < NCCL_VERSION(2, 28, 0)) {
    return "NCCL " + version_text(library_version) + " has no device API (2.28 or newer needed)";
  }
  // The device code reads ncclDevComm and ncclWindow_vidmem as this program's headers lay them
  // out, the library writes them as its own do; they differ between releases (2.28.3 and 2.28.7
  // already), so the two must be one release.
  if (library_version != NCCL_VERSION_CODE) {
    return "built with the headers of NCCL " + version_text(NCCL_VERSION_CODE) +
           ", run with the library of NCCL " + version_text(library_version) +
           ": the device API's structures differ between releases; rebuild against the library";
  }
  const int mine = world.local_index();
  const int other = 1 - mine;
  int can_access = 0;
  BENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, mine, other));
  if (can_access == 0) {
    return "GPU " + std::to_string(mine) + " cannot load from and store to GPU " +
           std::to_string(other) + " (no peer access: NCCL's LSA needs it)";
  }
  return "";
}

// One ping-pong of `size` bytes with each signal (collective).
class nccl_ping_pong {
 public:
  nccl_ping_pong(const mpi_world& world, const nccl_resources& nccl)
      : world_(world),
        nccl_(nccl),
        repetition_ns_(repetitions * sizeof(unsigned long long)),
        mismatches_(sizeof(int)) {}

  ping_pong_result run(signal_kind kind, std::size_t size) {
    // The flag and the receive area start at 0 on both GPUs before either kernel starts.
    auto* base = static_cast<unsigned char*>(nccl_.base);
    BENCH_CUDA_CHECK(cudaMemset(base + flag_offset, 0, sizeof(std::uint32_t)));
    BENCH_CUDA_CHECK(cudaMemset(base + receive_offset, 0, size));
    BENCH_CUDA_CHECK(cudaMemset(mismatches_.get(), 0, sizeof(int)));
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    world_.check(MPI_Barrier(world_.comm()), "MPI_Barrier");

    const int round_trips = round_trips_for(size);
    const ping_pong_args args{nccl_.device_comm,
                              nccl_.window,
                              1 - nccl_.device_comm.lsaRank,
                              world_.process(),
                              static_cast<int>(size),
                              warmup_for(round_trips),
                              round_trips,
                              repetition_ns_.get<unsigned long long>(),
                              mismatches_.get<int>()};
    if (kind == signal_kind::flag) {
      flag_ping_pong_kernel<<<1, threads>>>(args);
    } else {
      barrier_ping_pong_kernel<<<1, threads>>>(args);
    }
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned long long> nanoseconds(repetitions);
    int wrong = 0;
    BENCH_CUDA_CHECK(cudaMemcpy(nanoseconds.data(), repetition_ns_.get(), repetition_ns_.size(),
                                cudaMemcpyDeviceToHost));
    BENCH_CUDA_CHECK(cudaMemcpy(&wrong, mismatches_.get(), sizeof wrong, cudaMemcpyDeviceToHost));
    return {world_.from_process0(median_one_way_us(nanoseconds, round_trips)),
            world_.sum(wrong) == 0};
  }

 private:
  const mpi_world& world_;
  const nccl_resources& nccl_;
  device_bytes repetition_ns_;
  device_bytes mismatches_;
};

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "ping-pong through NCCL's device API (LSA stores, then a flag or NCCL's LSA barrier) "
      "between the GPUs of 2 processes (an anchor of dcuda's peer path); run it as mpirun -np 2");
  if (skip_without_two_gpus(world, /*one_node=*/true)) return 0;

  // Symmetric registration would otherwise set up NVLink multicast (NVLS) objects where the
  // hardware has it; this benchmark uses none, and a user's setting stays.
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);

  // The GPU dcuda would give this process: its index among the processes of its node.
  BENCH_CUDA_CHECK(cudaSetDevice(world.local_index()));
  require_distinct_gpus(world);

  int library_version = 0;
  if (ncclGetVersion(&library_version) != ncclSuccess) {
    fail_job(benchmark, "ncclGetVersion failed");
  }
  if (skip_for(world, first_reason(world, reason_before_nccl(world, library_version)))) return 0;

  {
    nccl_resources nccl;
    ncclUniqueId id{};
    if (world.process() == 0) {
      const ncclResult_t status = ncclGetUniqueId(&id);
      if (status != ncclSuccess) fail_job(benchmark, nccl_failure("ncclGetUniqueId", status));
    }
    world.check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world.comm()), "MPI_Bcast");
    const ncclResult_t init = ncclCommInitRank(&nccl.comm, world.processes(), id, world.process());
    if (init != ncclSuccess) fail_job(benchmark, nccl_failure("ncclCommInitRank", init));

    // Symmetric memory and the device communicator: where NCCL cannot give them here, the
    // device API is missing (both processes skip together). Without symmetric memory support
    // (GPUs without peer access, NCCL_CUMEM_ENABLE=0, NCCL_WIN_ENABLE=0) NCCL registers a plain
    // buffer and ncclDevCommCreate refuses; the window is torn down either way.
    std::string missing;
    if (const ncclResult_t status = ncclMemAlloc(&nccl.base, window_bytes); status != ncclSuccess) {
      nccl.base = nullptr;
      missing = nccl_failure("ncclMemAlloc", status);
    }
    if (skip_for(world, first_reason(world, missing))) return 0;
    if (const ncclResult_t status = ncclCommWindowRegister(nccl.comm, nccl.base, window_bytes,
                                                           &nccl.window, NCCL_WIN_COLL_SYMMETRIC);
        status != ncclSuccess) {
      nccl.window = nullptr;
      missing = nccl_failure("ncclCommWindowRegister", status);
    }
    if (skip_for(world, first_reason(world, missing))) return 0;
    ncclDevCommRequirements requirements{};  // nothing else: no multimem, no GIN
    requirements.lsaBarrierCount = 1;
    if (const ncclResult_t status = ncclDevCommCreate(nccl.comm, &requirements, &nccl.device_comm);
        status != ncclSuccess) {
      missing = nccl_failure("ncclDevCommCreate", status);
    } else {
      nccl.device_comm_created = true;
      if (nccl.device_comm.lsaSize != 2) {
        missing = "NCCL's LSA team (the ranks that reach each other by load/store) has " +
                  std::to_string(nccl.device_comm.lsaSize) +
                  " rank(s); the 2 GPUs need to be in one";
      } else if (nccl.device_comm.rank != world.process()) {
        fail_job(benchmark, "NCCL numbers this process rank " +
                                std::to_string(nccl.device_comm.rank) + ", MPI " +
                                std::to_string(world.process()));
      }
    }
    if (skip_for(world, first_reason(world, missing))) return 0;

    std::optional<report> out;
    if (world.prints()) {
      out.emplace(benchmark, command_line, current_device());
      out->set_measured_name("NCCL " + version_text(library_version));
    }
    nccl_ping_pong ping_pong(world, nccl);
    peer_flag_ping_pong flag_reference(world, largest_message);
    const std::string reference_detail =
        "flag ping-pong between one " + std::to_string(threads) +
        "-thread block on each GPU through CUDA IPC-mapped memory: payload copied with peer "
        "stores, system-scope release store of the counter; relaxed poll, then one acquire load";
    const auto make_table = [&](const std::string& what) {
      return table{"NCCL device API " + what + ", one way, one block of " +
                       std::to_string(threads) + " threads per GPU, 2 ranks",
                   "us",
                   "peer flag",
                   reference_detail,
                   2,
                   threads,
                   2,
                   {}};
    };
    table flag_results = make_table(
        "LSA flag ping-pong (payload stored through ncclGetLsaPointer, then a system-scope "
        "release store of the message number into a flag in the peer's window; acquire poll)");
    table barrier_results = make_table(
        "LSA barrier ping-pong (payload stored through ncclGetLsaPointer, then "
        "ncclLsaBarrierSession::sync of both blocks, acquire-release)");
    for (const std::size_t size : message_sizes()) {
      const ping_pong_result flag = ping_pong.run(signal_kind::flag, size);
      const ping_pong_result barrier = ping_pong.run(signal_kind::barrier, size);
      const int round_trips = round_trips_for(size);
      const ping_pong_result reference =
          flag_reference.run(threads, static_cast<int>(size), warmup_for(round_trips), round_trips);
      const char* wrong = !flag.data_arrived        ? "NCCL LSA flag"
                          : !barrier.data_arrived   ? "NCCL LSA barrier"
                          : !reference.data_arrived ? "peer flag reference"
                                                    : nullptr;
      if (wrong != nullptr) {
        fail_job(benchmark,
                 std::string(wrong) + ": wrong data received (" + std::to_string(size) + " B)");
      }
      flag_results.rows.push_back({size, flag.one_way_us, reference.one_way_us});
      barrier_results.rows.push_back({size, barrier.one_way_us, reference.one_way_us});
    }
    if (out) {
      out->print(flag_results);
      out->print(barrier_results);
      out->write_json();
    }
  }
  return 0;
}
