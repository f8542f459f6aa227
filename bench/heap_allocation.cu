// heap_allocation (extension): allocation from the rank heaps, `mpirun -np 2 heap_allocation`,
// one process per GPU, one rank of 512 threads per GPU (with -np 1, the team-aligned table is
// left out).
//   local-global  dcuda_malloc of 256 B .. 1 MiB by world rank 0, 64 blocks back to back (fewer
//                 where the heap of 64 MiB would not hold them), then dcuda_free of each; time per
//                 call, the median of 7 repetitions, by the GPU's global timer
//   team-aligned  dcuda_win_allocate over DCUDA_COMM_WORLD of both GPUs' ranks, then
//                 dcuda_win_free, per pair
//
// References, same program run, before the dcuda session: cudaMalloc and cudaFree of the same
// sizes and counts, timed on the host; for the team-aligned allocation, the same done by hand:
// cudaMalloc, cudaIpcGetMemHandle, MPI_Allgather of the handles, cudaIpcOpenMemHandle of the
// other process's, MPI_Barrier, then cudaIpcCloseMemHandle, MPI_Barrier and cudaFree.
// Targets: a dcuda_malloc at most 2 us and at least 100x faster than cudaMalloc; a team-aligned
// allocation with its free at most 1.2x the allocation and IPC exchange by hand with its release.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/bench_report.h"
#include "common/cuda_check.h"
#include "common/dcuda_session.h"
#include "common/message_sizes.h"
#include "common/mpi_world.h"
#include "common/statistics.h"
#include "dcuda/detail/device/clock.cuh"
#include "dcuda/device.cuh"

namespace {

using namespace dcuda_bench;

constexpr const char* benchmark = "heap_allocation";
constexpr int threads_per_rank = 512;
constexpr std::size_t heap_bytes = 64 * MiB;
constexpr int most_blocks = 64;
constexpr int team_pairs = 50;

enum class operation : int { local_global, team_aligned };

struct run_data {
  operation what;
  std::uint64_t size;
  int blocks;
  unsigned long long malloc_ns[repetitions];
  unsigned long long free_ns[repetitions];
  int wrong;  // blocks that were not where they should be
};

// Blocks of at most heap/2 each, so that the allocator has to split and merge.
int blocks_for(std::size_t size) {
  return static_cast<int>(std::min<std::size_t>(most_blocks, heap_bytes / 2 / size));
}

__device__ __noinline__ void local_global(dcuda_state& gst, run_data* run) {
  dcuda_gptr blocks[most_blocks];
  int wrong = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int b = 0; b < run->blocks; ++b) blocks[b] = dcuda_malloc(gst, run->size);
    const std::uint64_t allocated = dcuda::device::global_time_ns();
    for (int b = 0; b < run->blocks; ++b) dcuda_free(gst, blocks[b]);
    const std::uint64_t freed = dcuda::device::global_time_ns();
    if (threadIdx.x == 0 && repetition >= 0) {
      run->malloc_ns[repetition] = allocated - start;
      run->free_ns[repetition] = freed - allocated;
      for (int b = 0; b < run->blocks; ++b) wrong += blocks[b].offset % run->size != 0;
    }
  }
  if (threadIdx.x == 0) run->wrong = wrong;
}

__device__ __noinline__ void team_aligned(dcuda_state& gst, run_data* run) {
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const std::uint64_t start = dcuda::device::global_time_ns();
    for (int pair = 0; pair < team_pairs; ++pair) {
      void* base = nullptr;
      dcuda_win win = DCUDA_WIN_NONE;
      dcuda_win_allocate(gst, DCUDA_COMM_WORLD, static_cast<int>(run->size), &base, &win);
      if (threadIdx.x == 0 && win == DCUDA_WIN_NONE) ++run->wrong;
      dcuda_win_free(gst, win);
    }
    if (threadIdx.x == 0 && repetition >= 0) {
      run->malloc_ns[repetition] = dcuda::device::global_time_ns() - start;
    }
  }
}

__global__ void __launch_bounds__(threads_per_rank) heap_kernel(dcuda_context_handle dcuda) {
  __shared__ dcuda_state gst;
  dcuda_gpu_init(dcuda, gst);
  run_data* run = nullptr;
  dcuda_get_data(gst, reinterpret_cast<void**>(&run));
  int rank = 0;
  dcuda_comm_rank(gst, DCUDA_COMM_WORLD, &rank);
  if (run->what == operation::team_aligned) {
    team_aligned(gst, run);
  } else if (rank == 0) {
    local_global(gst, run);
  }
  dcuda_gpu_finish(gst);
}

std::vector<double> per_call_us(const unsigned long long (&ns)[repetitions], int calls) {
  std::vector<double> us;
  for (const unsigned long long t : ns) us.push_back(static_cast<double>(t) / calls / 1000);
  return us;
}

double since_us(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

struct host_reference {
  figure allocate;
  figure release;
};

// cudaMalloc and cudaFree of `blocks` blocks of `size` bytes, per call.
host_reference cuda_malloc_reference(std::size_t size, int blocks) {
  std::vector<void*> pointers(static_cast<std::size_t>(blocks));
  std::vector<double> allocate, release;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const auto start = std::chrono::steady_clock::now();
    for (void*& p : pointers) BENCH_CUDA_CHECK(cudaMalloc(&p, size));
    const double allocated = since_us(start);
    const auto freeing = std::chrono::steady_clock::now();
    for (void* p : pointers) BENCH_CUDA_CHECK(cudaFree(p));
    const double freed = since_us(freeing);
    if (repetition >= 0) {
      allocate.push_back(allocated / blocks);
      release.push_back(freed / blocks);
    }
  }
  return {summary(allocate), summary(release)};
}

// The team-aligned allocation by hand, with its release, per pair (collective).
figure team_reference(const mpi_world& world, std::size_t size) {
  std::vector<double> per_pair;
  std::vector<cudaIpcMemHandle_t> handles(static_cast<std::size_t>(world.processes()));
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
    const auto start = std::chrono::steady_clock::now();
    for (int pair = 0; pair < team_pairs; ++pair) {
      void* mine = nullptr;
      BENCH_CUDA_CHECK(cudaMalloc(&mine, size));
      cudaIpcMemHandle_t handle{};
      BENCH_CUDA_CHECK(cudaIpcGetMemHandle(&handle, mine));
      world.check(MPI_Allgather(&handle, sizeof handle, MPI_BYTE, handles.data(), sizeof handle,
                                MPI_BYTE, world.comm()),
                  "MPI_Allgather");
      std::vector<void*> mapped;
      for (int p = 0; p < world.processes(); ++p) {
        if (p == world.process()) continue;
        void* there = nullptr;
        BENCH_CUDA_CHECK(cudaIpcOpenMemHandle(&there, handles[static_cast<std::size_t>(p)],
                                              cudaIpcMemLazyEnablePeerAccess));
        mapped.push_back(there);
      }
      world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
      for (void* there : mapped) BENCH_CUDA_CHECK(cudaIpcCloseMemHandle(there));
      world.check(MPI_Barrier(world.comm()), "MPI_Barrier");
      BENCH_CUDA_CHECK(cudaFree(mine));
    }
    if (repetition >= 0) per_pair.push_back(since_us(start) / team_pairs);
  }
  return world.from_process0(summary(per_pair));
}

table make_table(const std::string& title, const std::string& reference_name,
                 const std::string& reference_detail, int ranks) {
  return {title, "us", reference_name, reference_detail, ranks, threads_per_rank, 0, {}};
}

}  // namespace

int main(int argc, char** argv) {
  mpi_world world(&argc, &argv, benchmark);
  const options command_line = parse_options(
      argc, argv, benchmark,
      "dcuda_malloc, dcuda_free and dcuda_win_allocate against cudaMalloc and the IPC exchange "
      "by hand; run it as mpirun -np 2 (or -np 1 without the team-aligned table)");
  if (world.processes() > 2) {
    fail_job(benchmark, "runs with 1 or 2 processes, one per GPU");
  }
  if (world.processes() == 2 && skip_without_two_gpus(world, /*one_node=*/true)) return 0;
  BENCH_CUDA_CHECK(cudaSetDevice(world.local_index()));
  if (world.processes() == 2) require_distinct_gpus(world);
  const bool team = world.processes() == 2;

  const std::vector<std::size_t> sizes{256, 4 * KiB, 64 * KiB, MiB};
  const std::vector<std::size_t> team_sizes{4 * KiB, MiB};
  std::vector<host_reference> cuda_malloc;
  std::vector<figure> team_by_hand;
  for (const std::size_t size : sizes) {
    cuda_malloc.push_back(cuda_malloc_reference(size, blocks_for(size)));
  }
  if (team) {
    for (const std::size_t size : team_sizes) team_by_hand.push_back(team_reference(world, size));
  }

  std::vector<figure> mallocs, frees, teams;
  int wrong = 0;
  {
    dcuda_session session(command_line, heap_kernel, threads_per_rank,
                          {"--dcuda-ranks-per-device=1", "--dcuda-force-network=0",
                           "--dcuda-heap-bytes=" + std::to_string(heap_bytes)});
    for (const std::size_t size : sizes) {
      run_data data{operation::local_global, size, blocks_for(size), {}, {}, 0};
      session.run(data);
      mallocs.push_back(world.from_process0(summary(per_call_us(data.malloc_ns, data.blocks))));
      frees.push_back(world.from_process0(summary(per_call_us(data.free_ns, data.blocks))));
      wrong += data.wrong;
    }
    if (team) {
      for (const std::size_t size : team_sizes) {
        run_data data{operation::team_aligned, size, 0, {}, {}, 0};
        session.run(data);
        teams.push_back(world.from_process0(summary(per_call_us(data.malloc_ns, team_pairs))));
        wrong += data.wrong;
      }
    }
  }
  if (world.sum(wrong) != 0) {
    fail_job(benchmark,
             "dcuda_malloc gave blocks not aligned to their size, or "
             "dcuda_win_allocate ran out of window slots");
  }
  if (!world.prints()) return 0;

  report out(benchmark, command_line, current_device());
  table malloc_table = make_table(
      "dcuda_malloc by one rank of 512 threads, per call (blocks back to back, then freed)",
      "cudaMalloc", "cudaMalloc of the same sizes and counts on the host, same run", 1);
  table free_table = make_table("dcuda_free by one rank of 512 threads, per call", "cudaFree",
                                "cudaFree of the blocks cudaMalloc gave, same run", 1);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    malloc_table.rows.push_back({sizes[i], mallocs[i].median, cuda_malloc[i].allocate.median,
                                 mallocs[i].min, mallocs[i].max});
    free_table.rows.push_back(
        {sizes[i], frees[i].median, cuda_malloc[i].release.median, frees[i].min, frees[i].max});
  }
  out.print(malloc_table);
  out.print(free_table);
  double slowest_malloc = 0, least_speedup = 1e30;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    slowest_malloc = std::max(slowest_malloc, mallocs[i].median);
    least_speedup = std::min(least_speedup, cuda_malloc[i].allocate.median / mallocs[i].median);
  }
  out.check({"dcuda_malloc, slowest size (us)", "us", slowest_malloc, 2.0, true});
  out.check({"dcuda_malloc against cudaMalloc, least speed-up over the sizes", "ratio",
             least_speedup, 100.0, false});
  if (team) {
    table team_table = make_table(
        "dcuda_win_allocate over DCUDA_COMM_WORLD, then dcuda_win_free, 1 rank per GPU, 2 GPUs, "
        "per pair",
        "by hand",
        "cudaMalloc, cudaIpcGetMemHandle, MPI_Allgather, cudaIpcOpenMemHandle, MPI_Barrier, then "
        "cudaIpcCloseMemHandle, MPI_Barrier, cudaFree; same run",
        2);
    double worst = 0;
    for (std::size_t i = 0; i < team_sizes.size(); ++i) {
      team_table.rows.push_back(
          {team_sizes[i], teams[i].median, team_by_hand[i].median, teams[i].min, teams[i].max});
      worst = std::max(worst, teams[i].median / team_by_hand[i].median);
    }
    out.print(team_table);
    out.check({"team-aligned allocation and free against the same by hand (ratio)", "ratio", worst,
               1.2, true});
  } else {
    std::printf("# one process: no team-aligned table (run with mpirun -np 2)\n\n");
  }
  out.write_json();
  return 0;
}
