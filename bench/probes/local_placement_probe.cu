// Probe behind "Where the two ranks run" (docs/performance.md): does a one-way trip between two
// blocks of one GPU depend on which multiprocessors the blocks run on, and on where in memory
// their flag lies? One block per multiprocessor (its dynamic shared memory allows no second);
// the two blocks whose %smid is A and B play, the others poll a "done" word as idle ranks do.
// Two protocols: the flag ping-pong of bench/reference/flag_ping_pong.cuh (acquire polls, a
// release store) and dcuda's (relaxed polls, one acquire load, a release reduction), each with a
// 4-byte payload stored by thread 0 before the block barrier. Not part of the build:
//   nvcc -O2 -std=c++17 -arch=sm_90 -o local_placement_probe bench/probes/local_placement_probe.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x)                                                \
  do {                                                       \
    cudaError_t err_ = (x);                                  \
    if (err_ != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(err_)); \
      std::exit(1);                                          \
    }                                                        \
  } while (0)

namespace {

constexpr int repetitions = 5;
constexpr unsigned long long give_up_ns = 200'000'000;  // a role's partner never came

struct probe_args {
  unsigned* words;  // flags and payloads at `offset_words`; done at word 0
  int offset_words;
  int sm_a, sm_b;
  int dcuda_protocol;  // 0: the flag ping-pong; 1: relaxed polls + acquire load + reduction
  int iterations;
  unsigned long long* repetition_ns;
  int* roles_found;  // blocks that took a role; 2 when both SMs held a block
  int* failures;     // gave up waiting, or the payload was wrong
};

__device__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ unsigned load_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ void add_release(unsigned* p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Thread 0 waits; false when the partner never came.
__device__ bool wait_for(const unsigned* flag, unsigned message, int dcuda_protocol) {
  const unsigned long long start = now_ns();
  for (int polls = 0;; ++polls) {
    const unsigned seen = dcuda_protocol ? load_relaxed(flag) : load_acquire(flag);
    if (static_cast<int>(seen - message) >= 0) break;
    if ((polls & 1023) == 1023 && now_ns() - start > give_up_ns) return false;
  }
  if (dcuda_protocol) (void)load_acquire(flag);
  return true;
}

__global__ void probe_kernel(probe_args args) {
  extern __shared__ unsigned char hold_the_multiprocessor[];
  const unsigned sm = smid();
  const int role = sm == static_cast<unsigned>(args.sm_a)   ? 0
                   : sm == static_cast<unsigned>(args.sm_b) ? 1
                                                            : -1;
  unsigned* done = args.words;
  if (role < 0) {
    if (threadIdx.x == 0) {
      const unsigned long long start = now_ns();
      while (load_relaxed(done) == 0 && now_ns() - start < 2 * give_up_ns) {
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) hold_the_multiprocessor[0] = 0;
    return;
  }
  if (threadIdx.x == 0) atomicAdd(args.roles_found, 1);
  unsigned* base = args.words + args.offset_words;
  unsigned* flag_in = base + (role == 0 ? 32 : 0);  // one 128-byte line per flag
  unsigned* flag_out = base + (role == 0 ? 0 : 32);
  unsigned* payload_in = flag_in + 64;
  unsigned* payload_out = flag_out + 64;
  __shared__ int failed;
  if (threadIdx.x == 0) failed = 0;
  __syncthreads();
  unsigned message = 0;
  for (int repetition = -1; repetition < repetitions; ++repetition) {
    const unsigned long long start = now_ns();
    for (int i = 0; i < args.iterations && !failed; ++i) {
      ++message;
      for (int turn = 0; turn < 2; ++turn) {
        const bool sending = (turn == 0) == (role == 0);
        if (sending) {
          if (threadIdx.x == 0) {
            *reinterpret_cast<volatile unsigned*>(payload_out) = message;
          }
          __syncthreads();
          if (threadIdx.x == 0) {
            if (args.dcuda_protocol) {
              add_release(flag_out, 1);
            } else {
              store_release(flag_out, message);
            }
          }
        } else {
          if (threadIdx.x == 0) {
            if (!wait_for(flag_in, message, args.dcuda_protocol) ||
                *reinterpret_cast<volatile unsigned*>(payload_in) != message) {
              failed = 1;
            }
          }
          __syncthreads();
        }
      }
    }
    if (role == 0 && threadIdx.x == 0 && repetition >= 0) {
      args.repetition_ns[repetition] = now_ns() - start;
    }
  }
  if (threadIdx.x == 0 && failed) atomicAdd(args.failures, 1);
  if (role == 0 && threadIdx.x == 0) store_release(done, 1);
}

}  // namespace

int main() {
  int multiprocessors = 0;
  CK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, 0));
  int shared_per_sm = 0;
  CK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  const int dynamic_shared = shared_per_sm / 2 + 1024;  // a second block would not fit
  CK(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          dynamic_shared));
  constexpr int words_total = 1 << 20;
  unsigned* words = nullptr;
  unsigned long long* repetition_ns = nullptr;
  int* counters = nullptr;
  CK(cudaMalloc(&words, words_total * sizeof(unsigned)));
  CK(cudaMalloc(&repetition_ns, repetitions * sizeof(unsigned long long)));
  CK(cudaMalloc(&counters, 2 * sizeof(int)));

  const int pairs[][2] = {{124, 126}, {128, 129}, {130, 131}, {0, 1},
                          {0, 2},     {0, 66},    {30, 100},  {60, 124}};
  const int offsets_kib[] = {4, 8, 12, 16, 20, 24, 28, 32, 64, 1024};
  std::printf(
      "# one-way us (median of %d repetitions of 2000 round trips), one block per SM of %d\n",
      repetitions, multiprocessors);
  std::printf("%-10s %-10s", "protocol", "SMs");
  for (int kib : offsets_kib) std::printf(" %7dK", kib);
  std::printf("\n");
  for (int protocol = 0; protocol < 2; ++protocol) {
    for (const auto& pair : pairs) {
      if (pair[0] >= multiprocessors || pair[1] >= multiprocessors) continue;
      std::printf("%-10s %3d,%-6d", protocol ? "dcuda" : "flag", pair[0], pair[1]);
      for (int kib : offsets_kib) {
        CK(cudaMemset(words, 0, words_total * sizeof(unsigned)));
        CK(cudaMemset(counters, 0, 2 * sizeof(int)));
        probe_args args{words, kib * 256,     pair[0],  pair[1],     protocol,
                        2000,  repetition_ns, counters, counters + 1};
        void* parameters[] = {&args};
        CK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&probe_kernel),
                                       dim3(multiprocessors), dim3(256), parameters,
                                       static_cast<size_t>(dynamic_shared), nullptr));
        CK(cudaDeviceSynchronize());
        int found[2] = {0, 0};
        CK(cudaMemcpy(found, counters, sizeof found, cudaMemcpyDeviceToHost));
        std::vector<unsigned long long> ns(repetitions);
        CK(cudaMemcpy(ns.data(), repetition_ns, repetitions * sizeof(unsigned long long),
                      cudaMemcpyDeviceToHost));
        std::sort(ns.begin(), ns.end());
        if (found[0] != 2 || found[1] != 0) {
          std::printf(" %8s", found[0] != 2 ? "no-sm" : "FAIL");
        } else {
          std::printf(" %8.3f", static_cast<double>(ns[repetitions / 2]) / 2000.0 / 2.0 / 1000.0);
        }
      }
      std::printf("\n");
    }
  }
  return 0;
}
