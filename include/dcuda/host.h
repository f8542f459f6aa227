// dcuda host API: thesis listing 3.3, with the same names, arguments and meaning.
// docs/api.md describes each call; docs/settings.md the environment variables and options.
//
// Errors: a call that cannot do what it is asked (bad argument, CUDA failure, a rank's misuse of
// the device API, a wait the watchdog found stuck) prints "dcuda: error: ..." on standard error,
// naming the call and the bad value, and ends the process with exit status 1.
#pragma once

#include <cstddef>
#include <vector>

#include "dcuda/version.h"

typedef struct dcuda_host_context* dcuda_host_context_handle;
typedef struct dcuda_context* dcuda_context_handle;
typedef void (*dcuda_kernel_t)(dcuda_context_handle);

struct dcuda_rank_info {
  int rank_count;        ///< total number of ranks
  int rank_responsible;  ///< number of ranks I own
  int rank_start;        ///< index of first rank I own
  int device_count;      ///< number of active devices on this compute node
  int device_index;      ///< my device index on the node
  int node_count;        ///< number of compute nodes
  int node_index;        ///< index of my node
  int process_count;     ///< number of host processes
  int process_index;     ///< index of my process
};

void dcuda_host_init(int argc, char* argv[], dcuda_host_context_handle* ctx, dcuda_kernel_t kernel,
                     int threads_per_rank);

void dcuda_host_get_rank_info(dcuda_host_context_handle ctx, dcuda_rank_info* rank_info);

double dcuda_host_run(dcuda_host_context_handle ctx, void* gpu_data = NULL, size_t gpu_size = 0);

std::vector<double> dcuda_host_get_timings(dcuda_host_context_handle ctx);

void dcuda_host_finish(dcuda_host_context_handle ctx);

// Extension (not in the thesis): maps the device allocation that contains `allocation` into the
// other processes of the node now, before any run, so that windows created in it later need no
// mapping while the kernel runs (compute-sanitizer memcheck only knows memory mapped before a
// kernel starts). Collective: every process calls it alike, each with its own pointer or NULL.
// The allocation must stay allocated until dcuda_host_finish. Optional; docs/api.md.
void dcuda_host_share_memory(dcuda_host_context_handle ctx, void* allocation);
