// Lets one header serve both compilers: nvcc sees __host__ __device__, g++ sees plain C++.
#pragma once

#if defined(__CUDACC__)
#define DCUDA_HD __host__ __device__
#else
#define DCUDA_HD
#endif

#include <cuda/atomic>
#include <cstdint>

namespace dcuda::protocol {

// Scope of the atomics that cross the PCIe bus (device <-> host memory). Same-GPU atomics use
// device scope, which is cheaper.
template <typename T>
using system_atomic = cuda::atomic_ref<T, cuda::thread_scope_system>;
template <typename T>
using device_atomic = cuda::atomic_ref<T, cuda::thread_scope_device>;

// True when `a` is at or past `b` on a wrapping 32-bit counter (valid while they are less than
// 2^31 apart). Every monotonic counter of dcuda (notifications, barrier arrivals, channel
// tickets) is compared through this one function.
DCUDA_HD constexpr bool reached(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) >= 0;
}

}  // namespace dcuda::protocol
