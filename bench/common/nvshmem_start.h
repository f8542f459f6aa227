// NVSHMEM started over MPI for the NVSHMEM benchmarks: a unique id from process 0, broadcast,
// one PE per process, numbered as MPI numbers the processes.
#pragma once

#include <nvshmem.h>
#include <nvshmemx.h>

#include <string>

#include "common/mpi_world.h"

namespace dcuda_bench {

inline void start_nvshmem(const mpi_world& world, const char* benchmark) {
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (world.process() == 0 && nvshmemx_get_uniqueid(&id) != 0) {
    fail_job(benchmark, "nvshmemx_get_uniqueid failed");
  }
  world.check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world.comm()), "MPI_Bcast");
  nvshmemx_init_attr_t attributes = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_set_attr_uniqueid_args(world.process(), world.processes(), &id, &attributes) != 0 ||
      nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attributes) != 0) {
    fail_job(benchmark, "NVSHMEM initialisation with a unique id failed");
  }
  if (nvshmem_my_pe() != world.process()) {
    fail_job(benchmark, "NVSHMEM numbers this process PE " + std::to_string(nvshmem_my_pe()) +
                            ", MPI " + std::to_string(world.process()));
  }
}

}  // namespace dcuda_bench
