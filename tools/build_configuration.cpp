#include "build_configuration.h"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdio>
#include <sstream>

#include "dcuda/version.h"
#include "text_table.h"

namespace dcuda::info {
namespace {

// "12080" -> "12.8"
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// MPI_Get_library_version may be called before MPI_Init.
std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  return first_line(std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

std::vector<std::string> built_architectures() {
  std::vector<std::string> architectures;
  std::istringstream list(DCUDA_INFO_CUDA_ARCHITECTURES);
  for (std::string architecture; list >> architecture;) architectures.push_back(architecture);
  return architectures;
}

void print_build_configuration() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  dcuda_get_version(&major, &minor, &patch);
  std::printf("dcuda %d.%d.%d\n", major, minor, patch);

  std::printf("\nbuild\n");
  text_table build({"CUDA toolkit", DCUDA_INFO_CUDA_TOOLKIT});
  build.add({"CUDA architectures", DCUDA_INFO_CUDA_ARCHITECTURES});
  build.add({"build type", DCUDA_INFO_BUILD_TYPE});
  build.add({"C++ compiler", DCUDA_INFO_CXX_COMPILER});
  build.add({"CUDA compiler", DCUDA_INFO_CUDA_COMPILER});
  build.add({"MPI", first_line(DCUDA_INFO_MPI_LIBRARY)});
  build.print();

  std::printf("\nrun time\n");
  int runtime = 0;
  int driver = 0;
  const bool runtime_known = cudaRuntimeGetVersion(&runtime) == cudaSuccess;
  const bool driver_known = cudaDriverGetVersion(&driver) == cudaSuccess;
  text_table run({"CUDA runtime", runtime_known ? cuda_version_text(runtime) : "unknown"});
  run.add({"CUDA driver", !driver_known ? "unknown"
                          : driver == 0 ? "none (no CUDA driver installed)"
                                        : cuda_version_text(driver)});
  run.add({"MPI library", mpi_library_version()});
  run.print();
}

}  // namespace dcuda::info
