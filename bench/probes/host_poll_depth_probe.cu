// Probe behind the delivery agent's polling (device/delivery_agent.cuh): does the device see a
// host store sooner when it keeps several reads of host memory in flight, issued a fraction of a
// round trip apart, instead of one read after the other? The device -> host -> device round trip
// of bench/reference/mapped_flag_round_trip.cuh, with the device's poll varied:
//   serial            one relaxed system-scope load at a time (as the reference and the agent)
//   K in flight, 1 line   K loads of the same word, issued round trip / K apart
//   K in flight, K lines  the same, each load to its own copy of the word (the host stores every
//                         copy), so that no read can be merged into another in flight
// Not part of the build:
//   nvcc -O2 -std=c++20 -arch=sm_90 -o host_poll_depth_probe bench/probes/host_poll_depth_probe.cu
// Result on an H200: bench/results/h200x2/experiments/host-poll-depth/.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <vector>

#define CK(x)                                                \
  do {                                                       \
    cudaError_t err_ = (x);                                  \
    if (err_ != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(err_)); \
      return 1;                                              \
    }                                                        \
  } while (0)

constexpr int line_words = 32;  // 128 bytes
constexpr int max_copies = 4;   // the warps mode reads copies 1..3
constexpr int repetitions = 7;

__device__ inline unsigned load_sys(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline void store_sys(unsigned* p, unsigned v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ inline std::uint64_t now_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ inline void spin_cycles(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// K loads in flight: load k goes to copies[k * stride] (stride 0: all to one word).
template <int K>
__device__ inline void poll_until(const unsigned* copies, int stride, unsigned message,
                                  long long stagger_cycles) {
  unsigned seen[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    seen[k] = load_sys(copies + k * stride);
    if (k + 1 < K) spin_cycles(stagger_cycles);
  }
  for (;;) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (seen[k] == message) return;
      seen[k] = load_sys(copies + k * stride);
    }
  }
}

struct probe_args {
  unsigned* to_host;
  unsigned* to_device;  // max_copies copies, one line apart
  int depth;            // loads in flight
  int stride;           // words between the loads' targets (0 or line_words)
  long long stagger_cycles;
  int round_trips;
  unsigned long long* repetition_ns;
  long long* read_cycles;  // one dependent read of host memory, measured first
};

// Thread 0's timed round trips: store each message for the host, then `wait_for(message)`.
template <typename Wait>
__device__ void time_round_trips(const probe_args& a, Wait&& wait_for) {
  unsigned message = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const std::uint64_t start = now_ns();
    for (int i = 0; i < a.round_trips; ++i) {
      ++message;
      store_sys(a.to_host, message);
      wait_for(message);
    }
    if (repetition >= 0) a.repetition_ns[repetition] = now_ns() - start;
  }
}

// Warps 1..depth poll copies 1..depth of the word, each in its own loop, their first reads
// staggered by stagger_cycles; whoever sees a new message hands it to warp 0 through shared
// memory. Warp 0 sends and waits for the hand-over.
__device__ void warps_kernel(const probe_args& a) {
  __shared__ unsigned seen;
  __shared__ unsigned stop;
  if (threadIdx.x == 0) {
    seen = 0;
    stop = 0;
  }
  __syncthreads();
  const int warp = threadIdx.x / 32;
  const bool lead = threadIdx.x % 32 == 0;
  if (warp > 0) {
    if (!lead) return;
    const unsigned* copy = a.to_device + warp * line_words;
    spin_cycles(a.stagger_cycles * (warp - 1));
    while (*static_cast<volatile unsigned*>(&stop) == 0u) {
      const unsigned value = load_sys(copy);
      if (value > *static_cast<volatile unsigned*>(&seen)) atomicMax(&seen, value);
    }
    return;
  }
  if (!lead) return;
  time_round_trips(a, [&](unsigned message) {
    while (*static_cast<volatile unsigned*>(&seen) < message) {
    }
  });
  *static_cast<volatile unsigned*>(&stop) = 1u;
}

__global__ void probe_kernel(probe_args a) {
  if (a.stride < 0) {  // the warps mode
    warps_kernel(a);
    return;
  }
  if (threadIdx.x != 0) return;
  {  // calibration: dependent reads of a host word
    unsigned v = 0;
    const long long start = clock64();
    for (int i = 0; i < 1000; ++i)
      v = load_sys(a.to_device + line_words * 3 + ((v & 0x80000000u) != 0u ? 1 : 0));
    *a.read_cycles = (clock64() - start) / 1000 + (v == 12345u ? 1 : 0);
  }
  time_round_trips(a, [&](unsigned message) {
    switch (a.depth) {
      case 1:
        poll_until<1>(a.to_device, a.stride, message, a.stagger_cycles);
        break;
      case 2:
        poll_until<2>(a.to_device, a.stride, message, a.stagger_cycles);
        break;
      default:
        poll_until<4>(a.to_device, a.stride, message, a.stagger_cycles);
        break;
    }
  });
}

int main() {
  void* host = nullptr;
  CK(cudaHostAlloc(&host, (1 + max_copies) * line_words * 4, cudaHostAllocMapped));
  std::fill_n(static_cast<unsigned*>(host), (1 + max_copies) * line_words, 0u);
  auto* to_host = static_cast<unsigned*>(host);
  unsigned* to_device = to_host + line_words;
  void* device_view = nullptr;
  CK(cudaHostGetDevicePointer(&device_view, host, 0));
  unsigned long long* ns = nullptr;
  long long* read_cycles = nullptr;
  CK(cudaMalloc(&ns, repetitions * sizeof *ns));
  CK(cudaMalloc(&read_cycles, sizeof *read_cycles));
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));

  struct mode {
    const char* name;
    int depth;
    int stride;
  };
  const mode modes[] = {{"serial", 1, 0},
                        {"2 in flight, 1 line", 2, 0},
                        {"2 in flight, 2 lines", 2, line_words},
                        {"4 in flight, 1 line", 4, 0},
                        {"4 in flight, 4 lines", 4, line_words},
                        {"1 polling warp", 1, -1},
                        {"2 polling warps", 2, -1},
                        {"3 polling warps", 3, -1}};
  const int round_trips = 20000;
  long long measured_read = 0;
  std::printf("%-24s %14s %14s\n", "# device poll", "round trip us", "read cycles");
  for (int pass = 0; pass < 2; ++pass) {
    for (const mode& m : modes) {
      cudaStream_t stream;
      CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      CK(cudaMemset(read_cycles, 0, sizeof *read_cycles));
      std::fill_n(static_cast<unsigned*>(host), (1 + max_copies) * line_words, 0u);
      const long long stagger = measured_read > 0 ? measured_read / m.depth : 1000;
      probe_args a{static_cast<unsigned*>(device_view),
                   static_cast<unsigned*>(device_view) + line_words,
                   m.depth,
                   m.stride,
                   stagger,
                   round_trips,
                   ns,
                   read_cycles};
      const int threads = m.stride < 0 ? 32 * (1 + m.depth) : 32;
      probe_kernel<<<1, threads, 0, stream>>>(a);
      CK(cudaGetLastError());
      const unsigned total = static_cast<unsigned>((repetitions + 1) * round_trips);
      unsigned answered = 0;
      auto seen_word = std::atomic_ref<unsigned>(*to_host);
      while (answered != total) {
        const unsigned seen = seen_word.load(std::memory_order_acquire);
        if (seen != answered) {
          answered = seen;
          for (int k = 0; k < max_copies; ++k) {
            std::atomic_ref<unsigned>(to_device[k * line_words])
                .store(seen, std::memory_order_release);
          }
        }
      }
      CK(cudaStreamSynchronize(stream));
      CK(cudaStreamDestroy(stream));
      unsigned long long results[repetitions];
      CK(cudaMemcpy(results, ns, sizeof results, cudaMemcpyDeviceToHost));
      long long read = 0;  // 0 in the warps mode, which does not calibrate
      CK(cudaMemcpy(&read, read_cycles, sizeof read, cudaMemcpyDeviceToHost));
      if (read > 0) measured_read = read;
      std::vector<double> us;
      for (const unsigned long long r : results) us.push_back(r / 1000.0 / round_trips);
      std::sort(us.begin(), us.end());
      if (pass == 1) {
        std::printf("%-24s %14.3f %14lld  (%.2f us per read; spread %.3f..%.3f)\n", m.name,
                    us[repetitions / 2], measured_read, measured_read / (clock_khz / 1000.0),
                    us.front(), us.back());
      }
    }
  }
  return 0;
}
