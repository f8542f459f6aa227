# CTest step: COMMAND (a list) must exit 0 and its output (standard output and error) must match
# every regular expression of EXPECT (a list), each on its own.
execute_process(COMMAND ${COMMAND} OUTPUT_VARIABLE output ERROR_VARIABLE output
                RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "exit status ${status}, output:\n${output}")
endif()
foreach(expected IN LISTS EXPECT)
  if(NOT output MATCHES "${expected}")
    message(FATAL_ERROR "the output does not match '${expected}':\n${output}")
  endif()
endforeach()
message(STATUS "output:\n${output}")
