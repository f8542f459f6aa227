# dcuda_check_architectures(architectures minimum): stops configuration when an entry of
# CMAKE_CUDA_ARCHITECTURES names a GPU older than dcuda supports. Entries look like 90, 90a,
# 90-real, 90-virtual; "native", "all" and "all-major" are accepted as they are.
function(dcuda_check_architectures architectures minimum)
  foreach(entry IN LISTS architectures)
    if(entry MATCHES "^(native|all|all-major)$")
      continue()
    endif()
    if(NOT entry MATCHES "^([0-9]+)[a-z]?(-real|-virtual)?$")
      message(FATAL_ERROR "dcuda: CMAKE_CUDA_ARCHITECTURES entry '${entry}' is not of the form "
                          "90, 90a, 90-real or 90-virtual")
    endif()
    if(CMAKE_MATCH_1 LESS minimum)
      message(FATAL_ERROR "dcuda: CMAKE_CUDA_ARCHITECTURES entry '${entry}' is older than dcuda "
                          "supports (compute capability ${minimum} or newer)")
    endif()
  endforeach()
endfunction()
