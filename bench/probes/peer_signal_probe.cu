// Probe behind the peer path's small-message latency (docs/notes/performance-history.md, "Peer
// latency"): what each way of publishing a notification to the other GPU costs, one way, in a
// ping-pong between one block on each of two GPUs of one process (peer access enabled). Each
// variant changes only how thread 0 signals and how the receiver polls; everything else is the same
// loop. Not part of the build:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o peer_signal_probe bench/probes/peer_signal_probe.cu
// Result on 2 H200s: bench/results/h200x2/experiments/peer-signal-probe.log.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t err_ = (x);                                                            \
    if (err_ != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

enum signal_kind : int {
  store_relaxed,          // flag only, st.relaxed.sys
  store_release,          // flag only, st.release.sys
  red_relaxed,            // flag only, red.relaxed.sys.add
  red_release,            // flag only, red.release.sys.add (dcuda_notify today)
  payload_store_release,  // 4 B payload store, then st.release.sys flag (the bench reference)
  payload_red_release,    // 4 B payload store, then red.release.sys.add (dcuda_put_notify today)
  payload_fence_acq_rel,  // payload, fence.acq_rel.sys, red.relaxed.sys.add
  payload_fence_sc,       // payload, fence.sc.sys, red.relaxed.sys.add
  ll8,                    // payload and sequence in one 8-byte store (LL)
  ll16,                   // two stamped words in one 16-byte store
  local_ticket_ll16,      // a returning device-scope atomic on this GPU (a slot), then ll16
  loaded_payload_red_release,  // payload loaded from this GPU's memory first (as dcuda_put_notify)
  // A ring per (target, sending GPU), 256 records of 16 B, as a peer-ring design would use it:
  ring_ticket,     // ticket from a local atomic, record at slot ticket % 256; relaxed poll
  ring_room,       // + the payload and the target's `taken` loaded (overlapped), room checked
  ring_take,       // + acquire poll of the head that also loads a counter; the receiver lands
                   //   the payload in its window and stores `taken` on the sender's GPU
  ring_take_call,  // ring_take with the take in a __noinline__ function (as the branch had it)
  // Does the receiver's poll period matter? The LL 16 B record polled with more loads in flight:
  ll16_same_line_x2,  // two loads of the one line in flight, examined in turn
  ll16_two_lines,     // the sender stores the record on two lines; a load of each in flight
  ll16_four_lines,    // the same with four lines
  ll16_with_counter,  // each poll also loads a counter on another line of this GPU (as dcuda's)
  ll16_spaced_128,    // 128 cycles between polls
  ll16_spaced_256,    // 256 cycles between polls
  ll16_spaced_512,    // 512 cycles between polls
  kinds
};
const char* const names[kinds] = {"flag st.relaxed.sys",
                                  "flag st.release.sys",
                                  "flag red.relaxed.sys.add",
                                  "flag red.release.sys.add",
                                  "payload st + flag st.release.sys",
                                  "payload st + red.release.sys.add",
                                  "payload st + fence.acq_rel.sys + red.relaxed",
                                  "payload st + fence.sc.sys + red.relaxed",
                                  "LL 8 B {payload, seq}",
                                  "LL 16 B {payload, seq, payload, seq}",
                                  "local atom.add (slot) + LL 16 B",
                                  "payload ld.global + st + red.release.sys.add",
                                  "ring: local ticket + 16 B record",
                                  "ring: + payload/taken loads, room check",
                                  "ring: + acquire poll w/ counter, land, taken",
                                  "ring: as above, take out of line",
                                  "LL 16 B, 2 polls of one line in flight",
                                  "LL 16 B on 2 lines, a poll of each in flight",
                                  "LL 16 B on 4 lines, a poll of each in flight",
                                  "LL 16 B, each poll with a counter load",
                                  "LL 16 B, 128 cycles between polls",
                                  "LL 16 B, 256 cycles between polls",
                                  "LL 16 B, 512 cycles between polls"};

enum poll_kind : int {
  poll_relaxed_then_acquire,
  poll_volatile,
  poll_acquire,
  poll_gpu_relaxed_then_acquire  // dcuda_wait_notifications: ld.relaxed.gpu, then ld.acquire.sys
};
const char* const poll_names[] = {"relaxed.sys poll + acquire", "volatile poll", "acquire poll",
                                  "relaxed.gpu poll + acquire"};

struct side {
  unsigned* my_flag;  // 64 B line: [0] counter/flag, [2..5] LL words
  unsigned* peer_flag;
  unsigned* peer_payload;
  unsigned* ticket;  // local
  // Ring variants: this side's ring (written by the other GPU), the other side's ring, where the
  // other side publishes how far it has taken this side's records (local) and where this side
  // publishes that (on the other GPU), and a local window the payload lands in.
  unsigned long long* my_ring;
  unsigned long long* peer_ring;
  unsigned* my_taken;
  unsigned* peer_taken;
  unsigned* window;
  unsigned long long* elapsed_ns;
  int* wrong;
};

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ unsigned load_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ unsigned load_volatile(const unsigned* p) {
  unsigned v;
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ void signal(int kind, const side& s, unsigned message) {
  unsigned* flag = s.peer_flag;
  switch (kind) {
    case store_relaxed:
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(message) : "memory");
      break;
    case store_release:
      asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(message) : "memory");
      break;
    case red_relaxed:
      asm volatile("red.relaxed.sys.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
      break;
    case red_release:
      asm volatile("red.release.sys.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
      break;
    case payload_store_release:
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(s.peer_payload), "r"(message)
                   : "memory");
      asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(message) : "memory");
      break;
    case payload_red_release:
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(s.peer_payload), "r"(message)
                   : "memory");
      asm volatile("red.release.sys.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
      break;
    case payload_fence_acq_rel:
    case payload_fence_sc:
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(s.peer_payload), "r"(message)
                   : "memory");
      if (kind == payload_fence_sc) {
        asm volatile("fence.sc.sys;" ::: "memory");
      } else {
        asm volatile("fence.acq_rel.sys;" ::: "memory");
      }
      asm volatile("red.relaxed.sys.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
      break;
    case ll8:
      asm volatile("st.relaxed.sys.global.v2.u32 [%0], {%1, %2};" ::"l"(flag + 2), "r"(message),
                   "r"(message)
                   : "memory");
      break;
    case ll16_four_lines:
      for (int line = 2; line < 4; ++line) {
        asm volatile(
            "st.relaxed.sys.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(flag + 4 + 32 * line),
            "r"(message), "r"(message), "r"(message), "r"(message)
            : "memory");
      }
      [[fallthrough]];
    case ll16_two_lines:
      asm volatile("st.relaxed.sys.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(flag + 4 + 32),
                   "r"(message), "r"(message), "r"(message), "r"(message)
                   : "memory");
      [[fallthrough]];
    case ll16_same_line_x2:
    case ll16_with_counter:
    case ll16_spaced_128:
    case ll16_spaced_256:
    case ll16_spaced_512:
    case ll16:
      asm volatile("st.relaxed.sys.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(flag + 4),
                   "r"(message), "r"(message), "r"(message), "r"(message)
                   : "memory");
      break;
    case loaded_payload_red_release: {
      unsigned zero;  // ticket[32] stays 0: read as dcuda reads the caller's buffer
      asm volatile("ld.global.u32 %0, [%1];" : "=r"(zero) : "l"(s.ticket + 32) : "memory");
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(s.peer_payload), "r"(message + zero)
                   : "memory");
      asm volatile("red.release.sys.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
      break;
    }
    case ring_ticket:
    case ring_room:
    case ring_take:
    case ring_take_call: {
      unsigned ticket;
      unsigned payload = message;
      asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;"
                   : "=r"(ticket)
                   : "l"(s.ticket)
                   : "memory");
      if (kind != ring_ticket) {
        unsigned zero, taken;  // ticket[32] stays 0: read as dcuda reads the caller's buffer
        asm volatile("ld.global.u32 %0, [%1];" : "=r"(zero) : "l"(s.ticket + 32) : "memory");
        asm volatile("ld.relaxed.sys.global.u32 %0, [%1];"
                     : "=r"(taken)
                     : "l"(s.my_taken)
                     : "memory");
        payload += zero;
        while (ticket - taken >= 256u) {
          asm volatile("ld.relaxed.sys.global.u32 %0, [%1];"
                       : "=r"(taken)
                       : "l"(s.my_taken)
                       : "memory");
        }
      }
      const unsigned long long stamp = ticket + 1u;
      asm volatile(
          "st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(s.peer_ring + 2 * (ticket % 256u)),
          "l"(stamp << 32 | payload), "l"(stamp << 32 | 4u)
          : "memory");
      break;
    }
    case local_ticket_ll16: {
      unsigned slot;
      asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;"
                   : "=r"(slot)
                   : "l"(s.ticket)
                   : "memory");
      asm volatile("st.relaxed.sys.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(flag + 4),
                   "r"(message), "r"(message), "r"(slot), "r"(message)
                   : "memory");
      break;
    }
  }
}

// The receiver's side of ring_take: lands the record's payload in the window and tells the
// sender how far this side has taken its ring.
__device__ __forceinline__ unsigned take_record(const side& s, unsigned long long first,
                                                unsigned long long second, unsigned message) {
  const auto payload = static_cast<unsigned>(first);
  s.window[static_cast<unsigned>(second & 0xffu) + (message % 8u)] = payload;
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(s.peer_taken), "r"(message) : "memory");
  return payload;
}
__device__ __noinline__ unsigned take_record_call(const side& s, unsigned long long first,
                                                  unsigned long long second, unsigned message) {
  return take_record(s, first, second, message);
}

__device__ unsigned wait_for_ring(int kind, const side& s, unsigned message) {
  const unsigned long long* slot = s.my_ring + 2 * ((message - 1u) % 256u);
  unsigned long long first, second;
  if (kind == ring_ticket || kind == ring_room) {
    do {
      asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                   : "=l"(first), "=l"(second)
                   : "l"(slot)
                   : "memory");
    } while ((first >> 32) != message || (second >> 32) != message);
    if (kind == ring_room) {  // the sender's room check needs to see progress
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(s.peer_taken), "r"(message)
                   : "memory");
    }
    return static_cast<unsigned>(first);
  }
  unsigned counter_sum = 0;
  while (true) {
    unsigned counter;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(counter) : "l"(s.my_flag) : "memory");
    asm volatile("ld.acquire.sys.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(first), "=l"(second)
                 : "l"(slot)
                 : "memory");
    counter_sum += counter;
    if ((first >> 32) == message && (second >> 32) == message) break;
  }
  const unsigned payload = kind == ring_take_call ? take_record_call(s, first, second, message)
                                                  : take_record(s, first, second, message);
  return payload + (counter_sum == 0xffffffffu);
}

__device__ inline void issue_ll16(const unsigned* where, unsigned (&w)[4]) {
  asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
               : "l"(where)
               : "memory");
}

// `lines` LL records 128 B apart (or one line polled `lines` times), a load of each in flight;
// the loads are examined in the order issued, and each is issued again once examined.
template <int lines>
__device__ unsigned wait_for_ll16_pipelined(const unsigned* flag, bool same_line,
                                            unsigned message) {
  unsigned w[lines][4];
#pragma unroll
  for (int i = 0; i < lines; ++i) issue_ll16(flag + 4 + (same_line ? 0 : 32 * i), w[i]);
  while (true) {
#pragma unroll
    for (int i = 0; i < lines; ++i) {
      if (w[i][1] == message && w[i][3] == message) return w[i][0];
      issue_ll16(flag + 4 + (same_line ? 0 : 32 * i), w[i]);
    }
  }
}

// Waits for message number `message`; returns the payload seen with it.
__device__ unsigned wait_for(int kind, int poll, const side& s, unsigned message) {
  if (kind == ll16_same_line_x2) return wait_for_ll16_pipelined<2>(s.my_flag, true, message);
  if (kind == ll16_two_lines) return wait_for_ll16_pipelined<2>(s.my_flag, false, message);
  if (kind == ll16_four_lines) return wait_for_ll16_pipelined<4>(s.my_flag, false, message);
  if (kind >= ring_ticket && kind <= ring_take_call) return wait_for_ring(kind, s, message);
  if (kind >= ll16_with_counter) {
    const long long spacing = kind == ll16_spaced_128   ? 128
                              : kind == ll16_spaced_256 ? 256
                              : kind == ll16_spaced_512 ? 512
                                                        : 0;
    unsigned w[4];
    unsigned counter_sum = 0;
    while (true) {
      if (kind == ll16_with_counter) {
        unsigned counter;
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
                     : "=r"(counter)
                     : "l"(s.ticket + 64)
                     : "memory");
        counter_sum += counter;
      }
      issue_ll16(s.my_flag + 4, w);
      if (w[1] == message && w[3] == message) break;
      if (spacing != 0) {
        const long long until = clock64() + spacing;
        while (clock64() < until) {
        }
      }
    }
    return w[0] + (counter_sum == 0xffffffffu);
  }
  const unsigned* flag = s.my_flag;
  if (kind == ll8) {
    unsigned a, b;
    do {
      asm volatile("ld.relaxed.sys.global.v2.u32 {%0, %1}, [%2];"
                   : "=r"(a), "=r"(b)
                   : "l"(flag + 2)
                   : "memory");
    } while (b != message);
    return a;
  }
  if (kind == ll16 || kind == local_ticket_ll16) {
    unsigned a, b, d;
    [[maybe_unused]] unsigned c;
    do {
      asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                   : "l"(flag + 4)
                   : "memory");
    } while (b != message || d != message);
    return a;
  }
  if (poll == poll_volatile) {
    while (load_volatile(flag) != message) {
    }
  } else if (poll == poll_acquire) {
    while (load_acquire(flag) != message) {
    }
  } else if (poll == poll_gpu_relaxed_then_acquire) {
    while (true) {
      unsigned v;
      asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
      if (v == message) break;
    }
    load_acquire(flag);
  } else {
    while (load_relaxed(flag) != message) {
    }
    load_acquire(flag);
  }
  // The payload word, where the variant sends one.
  return kind >= payload_store_release && kind != ll8 && kind != ll16 &&
                 kind != local_ticket_ll16 && kind < ring_ticket
             ? load_relaxed(s.my_flag + 15)
             : message;
}

__global__ void ping_pong(side s, int kind, int poll, int first, int iterations,
                          int block_barrier) {
  if (threadIdx.x == 0 || block_barrier) {
    unsigned wrong = 0;
    const unsigned long long start = now_ns();
    for (unsigned i = 1; i <= static_cast<unsigned>(iterations); ++i) {
      // block_barrier 2: also dcuda's entry check of every call (__syncthreads_count).
      if (first) {
        if (block_barrier == 2) wrong += __syncthreads_count(1) != static_cast<int>(blockDim.x);
        if (threadIdx.x == 0) signal(kind, s, i);
        if (block_barrier) __syncthreads();
        if (block_barrier == 2) wrong += __syncthreads_count(1) != static_cast<int>(blockDim.x);
        if (threadIdx.x == 0) wrong += wait_for(kind, poll, s, i) != i;
        if (block_barrier) __syncthreads();
      } else {
        if (block_barrier == 2) wrong += __syncthreads_count(1) != static_cast<int>(blockDim.x);
        if (threadIdx.x == 0) wrong += wait_for(kind, poll, s, i) != i;
        if (block_barrier) __syncthreads();
        if (block_barrier == 2) wrong += __syncthreads_count(1) != static_cast<int>(blockDim.x);
        if (threadIdx.x == 0) signal(kind, s, i);
        if (block_barrier) __syncthreads();
      }
    }
    if (threadIdx.x == 0) {
      *s.elapsed_ns = now_ns() - start;
      *s.wrong = wrong;
    }
  }
}

// Cycles per step of a dependent chain on thread 0 (the others wait at the end): what one
// round trip to each level costs, to read the ping-pong's figures against.
enum chain_kind : int {
  chain_ld_relaxed_sys,
  chain_ld_relaxed_gpu,
  chain_ld_weak,
  chain_atom_gpu,
  chain_ld_shared,
  chain_barrier,
  chain_kinds
};
const char* const chain_names[chain_kinds] = {
    "ld.relaxed.sys (own GPU memory)",  "ld.relaxed.gpu", "ld.global (weak, L1 hit)",
    "atom.add.relaxed.gpu (returning)", "ld.shared",      "__syncthreads, 512 threads"};

template <int kind>
__global__ void chain_kernel(unsigned* memory, int steps, long long* cycles) {
  __shared__ unsigned shared_words[64];
  if (threadIdx.x < 64) shared_words[threadIdx.x] = 0;
  __syncthreads();
  unsigned index = 0;
  long long start = clock64();
  for (int i = 0; i < steps; ++i) {
    if (kind == chain_barrier) {
      __syncthreads();
      continue;
    }
    if (threadIdx.x != 0) continue;
    unsigned value = 0;
    if constexpr (kind == chain_ld_relaxed_sys) {
      asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(memory + index));
    } else if constexpr (kind == chain_ld_relaxed_gpu) {
      asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(memory + index));
    } else if constexpr (kind == chain_ld_weak) {
      asm volatile("ld.global.u32 %0, [%1];" : "=r"(value) : "l"(memory + index));
    } else if constexpr (kind == chain_atom_gpu) {
      asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 0;"
                   : "=r"(value)
                   : "l"(memory + index));
    } else if constexpr (kind == chain_ld_shared) {
      value = *static_cast<volatile unsigned*>(shared_words + index);
    }
    index = value & 7u;  // the memory holds zeros: the next address depends on this load
  }
  const long long elapsed = clock64() - start;
  if (threadIdx.x == 0) *cycles = elapsed + index;
}

void print_chains() {
  CK(cudaSetDevice(0));
  unsigned* memory;
  long long* cycles;
  CK(cudaMalloc(&memory, 4096));
  CK(cudaMemset(memory, 0, 4096));
  CK(cudaMalloc(&cycles, sizeof(long long)));
  const int steps = 10000;
  using chain_function = void (*)(unsigned*, int, long long*);
  const chain_function chains[chain_kinds] = {
      chain_kernel<chain_ld_relaxed_sys>, chain_kernel<chain_ld_relaxed_gpu>,
      chain_kernel<chain_ld_weak>,        chain_kernel<chain_atom_gpu>,
      chain_kernel<chain_ld_shared>,      chain_kernel<chain_barrier>};
  std::printf("# dependent chains on thread 0, cycles per step (%d steps)\n", steps);
  for (int kind = 0; kind < chain_kinds; ++kind) {
    long long result = 0;
    for (int run = 0; run < 2; ++run) {  // the first run warms up
      chains[kind]<<<1, 512>>>(memory, steps, cycles);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(&result, cycles, sizeof result, cudaMemcpyDeviceToHost));
    }
    std::printf("%-40s %8.1f\n", chain_names[kind], static_cast<double>(result) / steps);
  }
  CK(cudaFree(memory));
  CK(cudaFree(cycles));
}

int main() {
  print_chains();
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::printf("needs 2 GPUs, found %d\n", count);
    return 0;
  }
  unsigned* line[2];
  unsigned* ticket[2];
  unsigned long long* ring[2];
  unsigned* taken[2];
  unsigned* window[2];
  unsigned long long* elapsed[2];
  int* wrong[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CK(cudaMalloc(&line[d], 1024));
    CK(cudaMalloc(&ticket[d], 256));
    CK(cudaMalloc(&ring[d], 256 * 16));
    CK(cudaMalloc(&taken[d], 256));
    CK(cudaMalloc(&window[d], 256));
    CK(cudaMalloc(&elapsed[d], sizeof(unsigned long long)));
    CK(cudaMalloc(&wrong[d], sizeof(int)));
  }
  const int iterations = 20000;
  std::printf("# peer signal probe: one-way latency (us), %d round trips, median of 5\n",
              iterations);
  std::printf("%-48s %-28s %10s %12s %14s\n", "# signal", "poll", "1 thread", "512 thr+bar",
              "+entry checks");
  for (int kind = 0; kind < kinds; ++kind) {
    for (int poll = 0; poll < 4; ++poll) {
      const bool flag_kind =
          kind != ll8 && kind != ll16 && kind != local_ticket_ll16 && kind < ring_ticket;
      if (kind < ll16_same_line_x2 && std::getenv("PROBE_NEW_ONLY") != nullptr && kind != ll16 &&
          kind != ring_take)
        continue;
      const bool dcuda_like =
          kind == payload_red_release || kind == loaded_payload_red_release || kind == red_release;
      if (poll == poll_gpu_relaxed_then_acquire ? !dcuda_like
          : poll != poll_relaxed_then_acquire   ? !(flag_kind && kind <= red_release)
                                                : false)
        continue;
      double result[3];
      for (int barrier = 0; barrier < 3; ++barrier) {
        std::vector<double> runs;
        for (int run = 0; run < 5; ++run) {
          for (int d = 0; d < 2; ++d) {
            CK(cudaSetDevice(d));
            CK(cudaMemset(line[d], 0, 1024));
            CK(cudaMemset(ticket[d], 0, 256));
            CK(cudaMemset(ring[d], 0, 256 * 16));
            CK(cudaMemset(taken[d], 0, 256));
            CK(cudaDeviceSynchronize());
          }
          for (int d = 0; d < 2; ++d) {
            CK(cudaSetDevice(d));
            side s{line[d],  line[1 - d],  line[1 - d] + 15, ticket[d],  ring[d], ring[1 - d],
                   taken[d], taken[1 - d], window[d],        elapsed[d], wrong[d]};
            ping_pong<<<1, barrier ? 512 : 32>>>(s, kind, poll, d == 0, iterations, barrier);
            CK(cudaGetLastError());
          }
          for (int d = 0; d < 2; ++d) {
            CK(cudaSetDevice(d));
            CK(cudaDeviceSynchronize());
          }
          unsigned long long ns = 0;
          int bad = 0;
          CK(cudaSetDevice(0));
          CK(cudaMemcpy(&ns, elapsed[0], sizeof ns, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(&bad, wrong[0], sizeof bad, cudaMemcpyDeviceToHost));
          if (bad) std::printf("  (%d payload mismatches in %s)\n", bad, names[kind]);
          runs.push_back(static_cast<double>(ns) / iterations / 2 / 1000);
        }
        std::sort(runs.begin(), runs.end());
        result[barrier] = runs[2];
      }
      std::printf("%-48s %-28s %10.3f %12.3f %14.3f\n", names[kind], poll_names[poll], result[0],
                  result[1], result[2]);
    }
  }
  return 0;
}
