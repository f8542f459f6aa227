// dcuda host API: thesis listing 3.3, with the same names, arguments and meaning.
// docs/api.md describes each call; docs/settings.md the environment variables and options.
//
// Errors: a call that cannot do what it is asked (bad argument, CUDA or MPI failure, a rank's
// misuse of the device API, a wait the watchdog found stuck) prints "dcuda: error: ..." on
// standard error, naming the call and the bad value, then calls the handler set with
// dcuda_host_set_error_handler (if any), then ends the process with exit status 1. The calls
// return only on success: the handler is the one place where a program learns of an error.
#pragma once

#include <cstddef>
#include <vector>

#include "dcuda/version.h"

typedef struct dcuda_host_context* dcuda_host_context_handle;
typedef struct dcuda_context* dcuda_context_handle;
typedef void (*dcuda_kernel_t)(dcuda_context_handle);
struct CUstream_st;  // cudaStream_t is a pointer to it (cuda_runtime_api.h)

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

// Extension (not in the thesis): dcuda_host_run ordered on a CUDA stream. Copies gpu_data in at
// the call, launches the kernel on `stream` behind the work already queued there, queues the copy
// of the results back into gpu_data on the same stream, and returns without waiting for any of
// it; the context's own thread serves the run (the ranks' host calls, logging, the watchdog).
// Work queued on `stream` later starts after the kernel ended and gpu_data holds its results, so
// gpu_data must stay valid until then. Every other call on the context first waits until the run
// has ended, but the stream-ordered calls of dcuda/host_stream.h that only queue work;
// dcuda_host_run_wait does only that. Errors of the run end the process as the other
// calls' do, from that thread. docs/api.md.
void dcuda_host_run_async(dcuda_host_context_handle ctx, struct CUstream_st* stream,
                          void* gpu_data = NULL, size_t gpu_size = 0);

// Extension: waits until the run dcuda_host_run_async started has ended and been served; returns
// its kernel's execution time in ms, as dcuda_host_run does. An error without such a run.
double dcuda_host_run_wait(dcuda_host_context_handle ctx);

// Extension (not in the thesis): maps the device allocation that contains `allocation` into the
// other processes of the node now, before any run, so that windows created in it later need no
// mapping while the kernel runs (compute-sanitizer memcheck only knows memory mapped before a
// kernel starts). Collective: every process calls it alike, each with its own pointer or NULL.
// The allocation must stay allocated until dcuda_host_finish. Optional; docs/api.md.
void dcuda_host_share_memory(dcuda_host_context_handle ctx, void* allocation);

// Extension (not in the thesis): what went wrong. The codes are stable (docs/api.md "Errors").
enum dcuda_error_code {
  DCUDA_ERROR_INVALID_ARGUMENT = 1,  // a host call's argument, found on the host: GPU usable
  DCUDA_ERROR_INVALID_STATE = 2,     // a call out of order (run after finish, ...): GPU usable
  DCUDA_ERROR_SETTING = 3,           // a malformed DCUDA_* variable or --dcuda-* argument
  DCUDA_ERROR_DEVICE_CALL = 4,       // a rank misused the device API; the kernel was stopped
  DCUDA_ERROR_TIMEOUT = 5,           // the watchdog found no progress; the kernel was stopped
  DCUDA_ERROR_CUDA = 6,              // a CUDA call failed (a kernel fault included)
  DCUDA_ERROR_MPI = 7,               // an MPI call failed
  DCUDA_ERROR_PEER = 8,              // another process failed, or made another collective call
  DCUDA_ERROR_INTERNAL = 9,          // a bug in dcuda
  DCUDA_ERROR_INTERRUPTED = 10       // SIGTERM or SIGINT during dcuda_host_run; the kernel was
                                     // stopped
};

// Extension: one error, as the handler receives it. The strings live until the process ends.
struct dcuda_error_info {
  dcuda_error_code code;
  const char* call;     // the API call that failed, e.g. "dcuda_host_run"
  const char* message;  // the whole text, as printed after "dcuda: error: "
  int process_index;    // this process's index, -1 before it is known
  int gpu_usable;       // 1: the CUDA context still works (cudaMemcpy, cudaFree, ...);
                        // 0: a kernel was trapped or faulted, or a wait may still hold the GPU
};

typedef void (*dcuda_error_handler)(const dcuda_error_info* error, void* user_data);

// Extension: the handler that every later error reaches, after its message is printed and before
// the process ends with exit status 1 (_Exit: a hung or faulted kernel may still hold the GPU, so
// atexit handlers do not run). It may flush files, save host data, tell a scheduler or call
// MPI_Abort, and should return; it must not call dcuda functions (an error inside them ends the
// process at once). Process-wide; may be called before dcuda_host_init. NULL restores the default
// (print and exit).
void dcuda_host_set_error_handler(dcuda_error_handler handler, void* user_data);

// Extension: "DCUDA_ERROR_TIMEOUT" etc.; "DCUDA_ERROR_UNKNOWN" for other values.
const char* dcuda_error_name(dcuda_error_code code);
