# CTest step: runs COMMAND (an MPI job of tests/mpi/dies_early.cpp, in which process 1 dies) and
# passes only if the job ends within 30 s, nonzero, and, where LAUNCHER_NAMES_PROCESS is on (Open
# MPI's mpirun), with output naming process 1. MPICH's Hydra ends the job with the dead process's
# exit status or a "BAD TERMINATION" report naming whichever pid it saw end first, often one it
# killed itself: there the quick, failed end is what is checked.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 30)
set(all "${out}${err}")
message("${all}")
if(result EQUAL 0)
  message(FATAL_ERROR "the job succeeded although process 1 died")
endif()
if(result MATCHES "timeout")
  message(FATAL_ERROR "the job hung: still running 30 s after process 1 died")
endif()
if(NOT LAUNCHER_NAMES_PROCESS)
  message("job ended as expected (${result})")
  return()
endif()
if(NOT all MATCHES "Process name: \\[\\[[0-9]+,[0-9]+\\],1\\]" AND NOT all MATCHES "process rank 1")
  message(FATAL_ERROR "the job ended (${result}) but nothing names process 1")
endif()
message("job ended as expected (${result}), naming process 1")
