# CTest step: runs COMMAND (an mpirun job that must fail) and passes only if it ends within
# LIMIT seconds, with a nonzero status, and its output matches EXPECT (a regular expression).
# A job that prints "SKIP: " is passed through for CTest's SKIP_REGULAR_EXPRESSION.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT ${LIMIT})
set(all "${out}${err}")
message("${all}")
if(all MATCHES "SKIP: ")
  return()
endif()
if(result MATCHES "timeout")
  message(FATAL_ERROR "the job hung: still running after ${LIMIT} s")
endif()
if(result EQUAL 0)
  message(FATAL_ERROR "the job succeeded, but it should have failed")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "the job failed (${result}), but its output does not match: ${EXPECT}")
endif()
message("the job failed as expected (${result}), saying what went wrong")
