// The one exception type of the host runtime. Every failure becomes one, with a message that
// names the call and the bad value; the C API boundary (host_api.cpp) prints it and exits.
#pragma once

#include <cuda_runtime_api.h>
#include <stdexcept>
#include <string>

namespace dcuda::runtime {

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call);

}  // namespace dcuda::runtime

// Checks a CUDA runtime call; the message carries the call as written.
#define DCUDA_CUDA_CHECK(call)                                  \
  do {                                                          \
    const cudaError_t dcuda_status_ = (call);                   \
    if (dcuda_status_ != cudaSuccess) {                         \
      ::dcuda::runtime::throw_cuda_error(dcuda_status_, #call); \
    }                                                           \
  } while (0)
