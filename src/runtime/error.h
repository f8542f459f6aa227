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

// The error path of the C API (host_api.cpp): prints "dcuda: error: <call>: <what>", hands the
// error to the program's handler, ends the process with exit status 1 (_Exit: nothing is torn
// down). Called by the API boundary, and directly where tearing down first could block on a
// peer or a running kernel, so that the error is printed before any teardown.
[[noreturn]] void report_and_exit(const char* call, const std::exception& failure);
// The same with `text` printed as it is, without the call in front.
[[noreturn]] void report_and_exit(const char* call, dcuda_error_code code, const std::string& text);

}  // namespace dcuda::runtime

// Checks a CUDA runtime call; the message carries the call as written.
#define DCUDA_CUDA_CHECK(call)                                  \
  do {                                                          \
    const cudaError_t dcuda_status_ = (call);                   \
    if (dcuda_status_ != cudaSuccess) {                         \
      ::dcuda::runtime::throw_cuda_error(dcuda_status_, #call); \
    }                                                           \
  } while (0)
