// What a dcuda version reports of its last dcuda_host_run: the time of its timed iterations is
// the first CPU timer (dcuda_start_cpu_timer after the warm-up, dcuda_stop_cpu_timer after the
// last iteration), and its communication is not separable from its computation.
#pragma once

#include "dcuda_host.h"
#include "mpi_process.h"

inline run_figures dcuda_run_figures(dcuda_host_context_handle dcuda, const dcuda_rank_info& info) {
  return {"dcuda",
          info.process_count,
          info.process_index,
          info.rank_responsible,
          dcuda_host_get_timings(dcuda).at(0),
          -1};
}
