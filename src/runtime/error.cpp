#include "runtime/error.h"

namespace dcuda::runtime {

dcuda_error_code code_of(const std::exception& failure) {
  const auto* ours = dynamic_cast<const error*>(&failure);
  return ours != nullptr ? ours->code() : DCUDA_ERROR_INTERNAL;
}

bool gpu_usable_after(dcuda_error_code code) {
  return code == DCUDA_ERROR_INVALID_ARGUMENT || code == DCUDA_ERROR_INVALID_STATE ||
         code == DCUDA_ERROR_SETTING;
}

void throw_cuda_error(cudaError_t status, const char* call) {
  throw error(DCUDA_ERROR_CUDA, std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                                    cudaGetErrorString(status) + ")");
}

}  // namespace dcuda::runtime
