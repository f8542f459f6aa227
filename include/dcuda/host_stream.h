// dcuda's host-initiated, stream-ordered operations (extension, not in the thesis): host windows,
// and put, put_notify, notify, get, flush, barrier and a notification wait issued by the host on
// a CUDA stream. docs/api.md "Host windows and stream-ordered operations (extensions)" describes
// each call.
//
// Each ..._on_stream call returns at once, without waiting for the GPU: the operation runs after
// the work queued before it on `stream` (NULL: the legacy default stream), and the work queued on
// `stream` after it starts only once it is complete. Operations on different streams are
// independent: an operation whose stream reached it runs then, whatever another stream still
// waits for, so operations complete in the order their streams get to them, not in the order the
// host issued them. The copy engines move the data and the GPUs count the notifications; no host
// thread takes part.
//
// A host window is one buffer per process (device memory from cudaMalloc); a target `rank` names
// the process that owns it (every rank of a process reaches the same buffer) and the rank whose
// notifications are counted. The targets are every process: those of the node through the peer
// path, the others through the network (a thread of each process carries the operations). A
// rank's dcuda_wait_notifications counts host-initiated
// notifications beside those ranks send, in runs launched after the first host window; stream
// waits and ranks consume them apart (give each rank and tag one of the two). Ranks of runs
// launched after a host window's creation put into it too (dcuda_put, dcuda_put_notify with its
// handle and a world rank, into any process's window; through the network by the run's host
// proxies): those notifications are counted where stream waits find them; a stream wait does not
// count dcuda_notify.
//
// The collective calls (window create and free, barrier) first wait for a run of
// dcuda_host_run_async in flight, as the calls of dcuda/host.h do; the others queue their work at
// once, also while a run is under way.
//
// Errors end the process as the calls of dcuda/host.h do; a stream wait that the watchdog finds
// waiting longer than DCUDA_WAIT_TIMEOUT is reported with what it waits for.
#pragma once

#include <cstddef>

#include "dcuda/host.h"

typedef int dcuda_win;  // the device API's window handle (dcuda/device/handles.cuh), the same type

// Collective over all processes, in the same order as their other collective calls: exposes
// `size` bytes at `base` (inside one cudaMalloc allocation of this process's GPU; NULL with size
// 0 exposes nothing) to the host-initiated operations of every process; the same handle in every
// process.
void dcuda_host_win_create(dcuda_host_context_handle ctx, void* base, size_t size, dcuda_win* win);

// Collective: waits until every operation queued on this GPU has completed, in every process,
// then releases the window; its handle is refused afterwards.
void dcuda_host_win_free(dcuda_host_context_handle ctx, dcuda_win win);

// Copies `size` bytes from `source` (device memory of this GPU, or pinned host memory) to
// `offset` in the window of `rank`'s process.
void dcuda_put_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank, size_t offset,
                         size_t size, const void* source, struct CUstream_st* stream);

// dcuda_put_on_stream, then one notification of `tag` (0..255) counted at `rank`, once the bytes
// are in its window: a wait that sees the notification sees the bytes.
void dcuda_put_notify_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank,
                                size_t offset, size_t size, const void* source, int tag,
                                struct CUstream_st* stream);

// One notification of `tag` at `rank`, without data; ordered after the stream's earlier puts.
void dcuda_notify_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank, int tag,
                            struct CUstream_st* stream);

// Copies `size` bytes from `offset` in the window of `rank`'s process to `destination` (device
// memory of this GPU, or pinned host memory; pageable host memory makes the call return only
// once the copy is done, as cudaMemcpyAsync does). The copy reads the window when the stream
// reaches it: after a stream wait, it sees the bytes whose notifications the wait consumed. The
// target is this process or a process of the node reached by the peer path; a process reached
// only through the network is refused with an error that names it.
void dcuda_get_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank, size_t offset,
                         size_t size, void* destination, struct CUstream_st* stream);

// The puts issued before it on `stream` to `win` are complete (their bytes in the target windows)
// before the work queued after it starts.
void dcuda_win_flush_on_stream(dcuda_host_context_handle ctx, dcuda_win win,
                               struct CUstream_st* stream);

// Makes `stream` wait until `count` more notifications of `tag` have arrived at `rank`, one of
// this process's ranks, then consumes them: each wait on (rank, tag) needs `count` beyond what the
// waits queued before it (on any stream) consume. The work queued after it sees their data.
void dcuda_wait_notifications_on_stream(dcuda_host_context_handle ctx, int rank, int tag, int count,
                                        struct CUstream_st* stream);

// Collective over all processes: the work queued after it on `stream` starts only once every
// process's stream has reached its barrier (the n-th call meets the n-th call of every other
// process).
void dcuda_barrier_on_stream(dcuda_host_context_handle ctx, struct CUstream_st* stream);
