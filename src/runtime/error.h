// The one exception type of the host runtime. Every failure becomes one, with a message that
// names the call and the bad value and a code (dcuda_error_code, include/dcuda/host.h) that says
// what kind of failure it is; the C API boundary (host_api.cpp) prints it, hands it to the
// program's error handler and exits.
#pragma once

#include <cuda_runtime_api.h>

#include <exception>
#include <stdexcept>
#include <string>

#include "dcuda/host.h"

namespace dcuda::runtime {

class error : public std::runtime_error {
 public:
  // Without a code: a failure that should not happen whatever the program does.
  explicit error(const std::string& message) : error(DCUDA_ERROR_INTERNAL, message) {}
  error(dcuda_error_code code, const std::string& message)
      : std::runtime_error(message), code_(code) {}

  dcuda_error_code code() const { return code_; }

 private:
  dcuda_error_code code_;
};

// The code of any exception: a runtime::error's own, DCUDA_ERROR_INTERNAL for the others.
dcuda_error_code code_of(const std::exception& failure);

// Whether the CUDA context still works after an error of this code: the codes of mistakes found
// on the host before a kernel runs. Every other error may follow a trapped or faulted kernel, or
// leave one running.
bool gpu_usable_after(dcuda_error_code code);

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
