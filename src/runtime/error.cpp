#include "runtime/error.h"

namespace dcuda::runtime {

void throw_cuda_error(cudaError_t status, const char* call) {
  throw error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
              cudaGetErrorString(status) + ")");
}

}  // namespace dcuda::runtime
