#include "bootstrap/mpi_cuda_support.h"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace dcuda::bootstrap {

mpi_cuda_support query_mpi_cuda_support() {
  mpi_cuda_support support;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  support.queried = true;
  support.built_in = MPIX_CUDA_AWARE_SUPPORT != 0;
  support.at_run_time = MPIX_Query_cuda_support() != 0;
#endif
  return support;
}

std::string describe(const mpi_cuda_support& support) {
  std::string text = "dcuda: MPI takes device buffers: ";
  if (!support.queried) {
    text += "unknown (this MPI offers no MPIX_Query_cuda_support; taken as no)";
  } else {
    text += support.at_run_time ? "yes" : "no";
    text += " (MPIX_Query_cuda_support() = ";
    text += support.at_run_time ? "1" : "0";
    text += ", built with CUDA support: ";
    text += support.built_in ? "yes)" : "no)";
  }
  text += "; dcuda stages network payloads through pinned host memory\n";
  return text;
}

}  // namespace dcuda::bootstrap
