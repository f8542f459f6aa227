// dcuda device API: thesis listings 3.4 and 3.5, with the same names, arguments and meaning.
// Include it in the .cu file that holds your dcuda kernel; everything is inline.
//
//   __global__ void kernel(dcuda_context_handle dcuda) {
//     __shared__ dcuda_state gst;
//     dcuda_gpu_init(dcuda, gst);
//     ...
//     dcuda_gpu_finish(gst);
//   }
//
// Calls marked (rank) must be made by all threads of the rank (block) together, those marked
// (thread 0) by thread 0 of the rank alone; the others may be made by any thread. docs/api.md
// describes each call, its guarantees and its errors.
#pragma once

#include "dcuda/device/handles.cuh"  // dcuda_context_handle, dcuda_comm, dcuda_win
#include "dcuda/device/state.cuh"    // dcuda_state
#include "dcuda/device/rank.cuh"     // (rank) dcuda_gpu_init, dcuda_gpu_finish, dcuda_comm_barrier;
                                     //        dcuda_get_data, dcuda_comm_size, dcuda_comm_rank
#include "dcuda/device/window.cuh"   // (rank) dcuda_win_create, dcuda_win_free
#include "dcuda/device/notified_access.cuh"  // (rank) dcuda_put, dcuda_put_notify, dcuda_notify,
                                             //        dcuda_win_flush
#include "dcuda/device/notifications.cuh"  // (rank) dcuda_test_notifications, dcuda_wait_notifications
#include "dcuda/device/host_calls.cuh"     // (rank) dcuda_start_cpu_timer, dcuda_stop_cpu_timer,
                                           //        dcuda_ping_host (extension)
#include "dcuda/device/datatypes.cuh"      // (rank) dcuda_pack, dcuda_unpack, dcuda_put_typed,
                                           //        dcuda_put_notify_typed (extension)
#include "dcuda/device/global_access.cuh"  // dcuda_gptr_of, dcuda_gptr_add, dcuda_gptr_is_local,
                                           // dcuda_gptr_address; (rank) dcuda_get, dcuda_get_gptr,
                                           //   dcuda_put_gptr, dcuda_put_notify_gptr,
                                           //   dcuda_atomic_fetch_add, _compare_swap, _swap;
                                           // (thread 0) their _thread forms (extension)
#include "dcuda/device/heap.cuh"  // (rank) dcuda_malloc, dcuda_free, dcuda_win_allocate (extension)
#include "dcuda/device/array.cuh"  // dcuda::array, dcuda::copy (extension)
#include "dcuda/device/log.cuh"    // dcuda_log, dcuda_log_get, dcuda_log_get_thread (extension)
#include "dcuda/device/thread_calls.cuh"  // (thread 0) dcuda_put_thread, dcuda_put_notify_thread,
                                          //   dcuda_notify_thread, dcuda_test_notifications_thread,
                                          //   dcuda_wait_notifications_thread (extension)
