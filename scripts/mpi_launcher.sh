# Sourced by scripts/test.sh and scripts/gpu-check.sh: what an MPI launcher needs to run the tests
# here, for CMake's MPIEXEC_PREFLAGS (tests/ take every launcher option from CMake).
#   mpi_preflags LAUNCHER  prints the options for LAUNCHER (mpirun, mpiexec, mpiexec.mpich, ...):
#                          for Open MPI --oversubscribe (more processes than cores on small
#                          machines), --bind-to none (each process's host proxy spins on a thread
#                          of its own) and, as root, --allow-run-as-root; MPICH's Hydra needs none.
#   mpi_environment LAUNCHER  exports, for Open MPI, OMPI_MCA_btl_vader_single_copy_mechanism=none:
#                          containers often forbid the cross-memory attach (CMA) that Open MPI's
#                          shared-memory transport uses for large messages by default.

mpi_is_open_mpi() {
  "$1" --version 2>&1 | grep -q -e "Open MPI" -e OpenRTE
}

mpi_preflags() {
  if mpi_is_open_mpi "$1"; then
    local flags="--oversubscribe --bind-to none"
    if [ "$(id -u)" = 0 ]; then flags="--allow-run-as-root $flags"; fi
    echo "$flags"
  fi
}

mpi_environment() {
  if mpi_is_open_mpi "$1"; then
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
  fi
}
