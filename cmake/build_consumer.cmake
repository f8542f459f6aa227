# CTest step: configure and build tests/consumer against the installed dcuda package.
# Inputs: SOURCE, BINARY, PREFIX, CUDA_COMPILER.
if(NOT EXISTS "${PREFIX}/lib/cmake/dcuda/dcudaConfig.cmake")
  message(FATAL_ERROR "no installed dcuda package under ${PREFIX}; run scripts/install.sh")
endif()
file(REMOVE_RECURSE "${BINARY}")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE}" -B "${BINARY}" -G Ninja
                        -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
                RESULT_VARIABLE configured)
if(NOT configured EQUAL 0)
  message(FATAL_ERROR "configuring the consumer project failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${BINARY}" RESULT_VARIABLE built)
if(NOT built EQUAL 0)
  message(FATAL_ERROR "building the consumer project failed")
endif()
