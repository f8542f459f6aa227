# NCCL, for the NCCL-CUDA baselines of the case studies (apps/) and for bench/nccl_latency: looked
# for in DCUDA_NCCL_ROOT, the CUDA toolkit, $NCCL_HOME and the folder of the Python package
# nvidia.nccl. Sets the cache variables DCUDA_NCCL_INCLUDE_DIR (the folder of nccl.h) and
# DCUDA_NCCL_LIBRARY, each ...-NOTFOUND when missing; whoever includes this says what it builds.
include_guard(GLOBAL)

set(DCUDA_NCCL_ROOT "" CACHE PATH
    "NCCL installation for the NCCL-CUDA baselines of apps/ and bench/nccl_latency")
set(nccl_hints ${DCUDA_NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT} $ENV{NCCL_HOME})
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import nvidia.nccl as m; print(m.__path__[0])"
                  OUTPUT_VARIABLE nccl_python_root OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
  list(APPEND nccl_hints ${nccl_python_root})
endif()
find_path(DCUDA_NCCL_INCLUDE_DIR nccl.h HINTS ${nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
# The library beside the headers first: a machine may hold another NCCL in a system folder (found
# first by name), and bench/nccl_latency's device structures must match the library it runs with.
if(DCUDA_NCCL_INCLUDE_DIR)
  get_filename_component(nccl_headers_root "${DCUDA_NCCL_INCLUDE_DIR}" DIRECTORY)
  find_library(DCUDA_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
               HINTS ${nccl_headers_root} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
endif()
find_library(DCUDA_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
             HINTS ${nccl_hints} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
