# How the MPI tests are launched: FindMPI's MPIEXEC_EXECUTABLE, MPIEXEC_NUMPROC_FLAG,
# MPIEXEC_PREFLAGS (before the program) and MPIEXEC_POSTFLAGS (after it), so that any launcher
# runs them: mpirun of Open MPI, mpiexec of MPICH, srun. Launcher-specific options (Open MPI as
# root: --allow-run-as-root --oversubscribe) come from whoever configures, e.g. scripts/test.sh:
#   cmake -DMPIEXEC_PREFLAGS="--allow-run-as-root --oversubscribe" ...
# The flags may be given as one string or as a list. The processes' environment goes through
# CTest's ENVIRONMENT property: each launcher passes its own environment on to the processes it
# starts on the local node.
separate_arguments(dcuda_mpiexec_preflags UNIX_COMMAND "${MPIEXEC_PREFLAGS}")
separate_arguments(dcuda_mpiexec_postflags UNIX_COMMAND "${MPIEXEC_POSTFLAGS}")

# dcuda_mpiexec(<out> <processes> <program> [<arguments>...]): the command that runs <program>
# with <arguments> in <processes> processes, as a list.
function(dcuda_mpiexec out processes program)
  set(${out} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${processes}
      ${dcuda_mpiexec_preflags} ${program} ${dcuda_mpiexec_postflags} ${ARGN} PARENT_SCOPE)
endfunction()
