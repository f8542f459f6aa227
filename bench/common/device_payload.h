// The benchmarks' payload pattern (reference/mpi_ping_pong.h, host_payload_byte) in device
// memory, written and checked from the host: for programs whose messages the host queues.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "common/cuda_check.h"
#include "reference/mpi_ping_pong.h"

namespace dcuda_bench {

// Fills device memory [device, device + bytes) with the pattern of `sender`.
inline void upload_payload(void* device, std::size_t bytes, int sender) {
  std::vector<unsigned char> payload(bytes);
  fill_host_payload(payload.data(), bytes, sender);
  BENCH_CUDA_CHECK(cudaMemcpy(device, payload.data(), bytes, cudaMemcpyHostToDevice));
}

// Whether device memory [device, device + bytes) holds the pattern of `sender`.
inline bool device_holds_payload(const void* device, std::size_t bytes, int sender) {
  std::vector<unsigned char> bytes_there(bytes);
  BENCH_CUDA_CHECK(cudaMemcpy(bytes_there.data(), device, bytes, cudaMemcpyDeviceToHost));
  return host_holds_payload(bytes_there.data(), bytes, sender);
}

}  // namespace dcuda_bench
