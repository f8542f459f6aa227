# CTest step: runs dcuda_check_architectures (cmake/architectures.cmake) on ARCHITECTURES against
# MINIMUM, as the top-level CMakeLists.txt does at configure time.
include(${CMAKE_CURRENT_LIST_DIR}/architectures.cmake)
dcuda_check_architectures("${ARCHITECTURES}" ${MINIMUM})
message(STATUS "accepted: ${ARCHITECTURES}")
