// The C-style calls of include/dcuda/host_stream.h: each checks its context and hands the rest to
// the context's stream_operations (runtime/stream_operations.h), inside `guarded` like every
// public call.
#include "dcuda/host_stream.h"

#include <string>

#include "runtime/api_boundary.h"
#include "runtime/host_context.h"

using dcuda::runtime::guarded;
using dcuda::runtime::live_context;

void dcuda_host_win_create(dcuda_host_context_handle ctx, void* base, size_t size, dcuda_win* win) {
  constexpr const char* call = "dcuda_host_win_create";
  guarded(call, [&] {
    auto& context = live_context(call, ctx);
    if (win == nullptr) {
      throw dcuda::runtime::error(DCUDA_ERROR_INVALID_ARGUMENT,
                                  std::string(call) + ": win is NULL");
    }
    *win = context.collective_stream_operations().create_window(call, base, size);
  });
}

void dcuda_host_win_free(dcuda_host_context_handle ctx, dcuda_win win) {
  constexpr const char* call = "dcuda_host_win_free";
  guarded(call, [&] {
    auto& context = live_context(call, ctx);
    context.wait_for_run();  // collective, as the other calls that wait for the run in flight
    context.started_stream_operations(call).free_window(call, win);
  });
}

void dcuda_put_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank, size_t offset,
                         size_t size, const void* source, struct CUstream_st* stream) {
  constexpr const char* call = "dcuda_put_on_stream";
  guarded(call, [&] {
    live_context(call, ctx).started_stream_operations(call).put(call, win, rank, offset, size,
                                                                source, std::nullopt, stream);
  });
}

void dcuda_put_notify_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank,
                                size_t offset, size_t size, const void* source, int tag,
                                struct CUstream_st* stream) {
  constexpr const char* call = "dcuda_put_notify_on_stream";
  guarded(call, [&] {
    live_context(call, ctx).started_stream_operations(call).put(call, win, rank, offset, size,
                                                                source, tag, stream);
  });
}

void dcuda_notify_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank, int tag,
                            struct CUstream_st* stream) {
  constexpr const char* call = "dcuda_notify_on_stream";
  guarded(call, [&] {
    live_context(call, ctx).started_stream_operations(call).notify(call, win, rank, tag, stream);
  });
}

void dcuda_get_on_stream(dcuda_host_context_handle ctx, dcuda_win win, int rank, size_t offset,
                         size_t size, void* destination, struct CUstream_st* stream) {
  constexpr const char* call = "dcuda_get_on_stream";
  guarded(call, [&] {
    live_context(call, ctx).started_stream_operations(call).get(call, win, rank, offset, size,
                                                                destination, stream);
  });
}

void dcuda_win_flush_on_stream(dcuda_host_context_handle ctx, dcuda_win win,
                               struct CUstream_st* stream) {
  constexpr const char* call = "dcuda_win_flush_on_stream";
  guarded(call, [&] {
    live_context(call, ctx).started_stream_operations(call).flush(call, win, stream);
  });
}

void dcuda_wait_notifications_on_stream(dcuda_host_context_handle ctx, int rank, int tag, int count,
                                        struct CUstream_st* stream) {
  constexpr const char* call = "dcuda_wait_notifications_on_stream";
  guarded(call, [&] {
    live_context(call, ctx).started_stream_operations(call).wait(call, rank, tag, count, stream);
  });
}

void dcuda_barrier_on_stream(dcuda_host_context_handle ctx, struct CUstream_st* stream) {
  constexpr const char* call = "dcuda_barrier_on_stream";
  guarded(call,
          [&] { live_context(call, ctx).collective_stream_operations().barrier(call, stream); });
}
