// Whether the MPI library takes device buffers (MPIX_Query_cuda_support() where MPI has it).
// Open MPI answers through its extension header; other MPIs that do not declare the query are
// taken as not CUDA-aware. dcuda stages every network payload through pinned host memory either
// way: a direct device-buffer path is future work (docs/design.md "Across GPUs and nodes"), so
// today the answer only goes into the verbose start-up report.
#pragma once

#include <string>

namespace dcuda::bootstrap {

struct mpi_cuda_support {
  bool built_in = false;     // the library was built with CUDA support (compile time)
  bool at_run_time = false;  // MPIX_Query_cuda_support() said yes
  bool queried = false;      // the library offers the query at all
};

mpi_cuda_support query_mpi_cuda_support();

// One line for DCUDA_VERBOSE, naming the query and what dcuda does with the answer.
std::string describe(const mpi_cuda_support& support);

}  // namespace dcuda::bootstrap
