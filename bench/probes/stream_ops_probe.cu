// Probe behind the delivery agent (protocol/delivery_queue.h): how fast a host thread's stream
// operations (small and 1 MiB host-to-device copies, cuStreamWriteValue32, event records) run
// while a persistent kernel holds all or half of the multiprocessors. Not part of the build:
//   nvcc -O2 -std=c++17 -o stream_ops_probe bench/probes/stream_ops_probe.cu -lcuda
// Result on an H200: bench/results/h200x2/stream-ops-probe.log.
#include <cuda.h>
#include <cuda_runtime.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#define CK(x)                                                                       \
  do {                                                                              \
    cudaError_t err_ = (x);                                                         \
    if (err_ != cudaSuccess) std::printf("%s: %s\n", #x, cudaGetErrorString(err_)); \
  } while (0)
using clk = std::chrono::steady_clock;

__global__ void hold(volatile unsigned* stop, unsigned* polled, int sleep_ns) {
  if (threadIdx.x == 0) {
    unsigned sink = 0;
    while (true) {
      unsigned v;
      asm volatile("ld.relaxed.sys.global.u32 %0, [%1];"
                   : "=r"(v)
                   : "l"(polled + blockIdx.x * 256)
                   : "memory");
      sink += v;
      if ((sink & 0xfff) == 0xfff && *stop) break;
      if (*stop) break;
      if (sleep_ns) __nanosleep(sleep_ns);
    }
    if (sink == 12345) polled[0] = sink;
  }
  __syncthreads();
}

std::atomic<long long> call_started{0};
std::atomic<bool> in_call{false};
volatile unsigned* stop_flag;

double now_us() {
  return std::chrono::duration<double, std::micro>(clk::now().time_since_epoch()).count();
}

int main() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned* stop = nullptr;
  CK(cudaHostAlloc(&stop, 4096, cudaHostAllocMapped));
  stop_flag = stop;
  unsigned *polled, *target;
  CK(cudaMalloc(&polled, 256 * 4 * 1024));
  CK(cudaMemset(polled, 0, 256 * 4 * 1024));
  CK(cudaMalloc(&target, 64 << 20));
  char* pinned = nullptr;
  CK(cudaHostAlloc(&pinned, 64 << 20, 0));
  cudaStream_t ks, cs;
  CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 12000, cudaEnableDefault, &q));
  auto write_value =
      reinterpret_cast<CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned)>(fn);
  cudaEvent_t ev[64], drained;
  for (auto& e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&drained, cudaEventDisableTiming));
  std::atomic<bool> done{false};
  // A single call blocked for 2 s releases the kernel, so that the probe always ends.
  std::thread watchdog([&] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (in_call && now_us() - call_started > 2e6) {
        std::printf("    a single call blocked > 2 s: releasing the kernel\n");
        std::fflush(stdout);
        *stop_flag = 1;
        in_call = false;
      }
    }
  });
  struct variant {
    const char* name;
    int blocks;
    int sleep_ns;
  } variants[] = {{"all SMs, tight sys polling", sms, 0},
                  {"all SMs, polling + nanosleep 1us", sms, 1000},
                  {"half SMs, tight polling", sms / 2, 0}};
  const char* phases[] = {"memcpy 4 B H2D",       "memcpyBatch 4 B H2D (overlap)",
                          "cuStreamWriteValue32", "cudaEventRecord",
                          "memcpy 1 MiB H2D",     "4B copy+record+writeValue"};
  for (auto& v : variants) {
    for (int p = 0; p < 6; ++p) {
      *stop = 0;
      hold<<<v.blocks, 1024, 0, ks>>>(stop, polled, v.sleep_ns);
      CK(cudaGetLastError());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const int n = p == 4 ? 200 : 2000;
      double t0 = now_us();
      int issued = 0;
      for (int i = 0; i < n && !*stop; ++i) {
        call_started = (long long)now_us();
        in_call = true;
        switch (p) {
          case 0:
            CK(cudaMemcpyAsync(target + (i % 4096), pinned + 4 * (i % 4096), 4,
                               cudaMemcpyHostToDevice, cs));
            break;
          case 1: {
            cudaMemcpyAttributes a{};
            a.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
            a.flags = cudaMemcpyFlagPreferOverlapWithCompute;
            size_t ai = 0;
            void* d[] = {target + (i % 4096)};
            const void* s[] = {pinned + 4 * (i % 4096)};
            size_t sz[] = {4};
            CK(cudaMemcpyBatchAsync(d, s, sz, 1, &a, &ai, 1, cs));
            break;
          }
          case 2:
            write_value(cs, (CUdeviceptr)(target + 8192 + (i % 1024)), i, 0);
            break;
          case 3:
            CK(cudaEventRecord(ev[i % 64], cs));
            break;
          case 4:
            CK(cudaMemcpyAsync((char*)target + (i % 32) * (1 << 20), pinned + (i % 32) * (1 << 20),
                               1 << 20, cudaMemcpyHostToDevice, cs));
            break;
          case 5:
            CK(cudaMemcpyAsync(target + (i % 4096), pinned + 4 * (i % 4096), 4,
                               cudaMemcpyHostToDevice, cs));
            CK(cudaEventRecord(ev[i % 64], cs));
            write_value(cs, (CUdeviceptr)(target + 8192 + (i % 1024)), i, 0);
            break;
        }
        in_call = false;
        ++issued;
      }
      double t1 = now_us();
      CK(cudaEventRecord(drained, cs));
      cudaError_t st = cudaErrorNotReady;
      while (!*stop && (st = cudaEventQuery(drained)) == cudaErrorNotReady && now_us() - t1 < 2e6) {
      }
      double t2 = now_us();
      bool drained_running = st == cudaSuccess && !*stop;
      *stop = 1;
      CK(cudaStreamSynchronize(ks));
      CK(cudaStreamSynchronize(cs));
      std::printf(
          "%-34s | %-30s | issued %5d in %9.0f us (%7.2f us/op) | %s %9.0f us after the last "
          "issue\n",
          v.name, phases[p], issued, t1 - t0, (t1 - t0) / (issued ? issued : 1),
          drained_running ? "done while the kernel ran," : "NOT done while the kernel ran,",
          t2 - t1);
      std::fflush(stdout);
    }
  }
  done = true;
  watchdog.join();
}
