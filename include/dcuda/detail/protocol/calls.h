// Names of the device API calls, so that a report made on the GPU as a small number is printed
// on the host with the name the user wrote.
#pragma once

#include <cstdint>

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

enum class call : std::uint16_t {
  gpu_init,
  gpu_finish,
  comm_barrier,
  win_create,
  win_free,
  notify,
  put,
  put_notify,
  win_flush,
  test_notifications,
  wait_notifications,
  start_cpu_timer,
  stop_cpu_timer,
  log,
  ping_host,
  comm_size,
  comm_rank,
  ring_poll,  // not a call: a rank takes its peer rings' records inside every dcuda wait
  pack,
  unpack,
  put_typed,
  put_notify_typed,
  put_thread,  // the thread-scoped calls (dcuda/device/thread_calls.cuh)
  put_notify_thread,
  notify_thread,
  test_notifications_thread,
  wait_notifications_thread,
  get,  // the global-access calls (dcuda/device/global_access.cuh)
  put_gptr,
  put_notify_gptr,
  gptr_add,
  atomic_fetch_add,
  atomic_compare_swap,
  atomic_swap,
  atomic_fetch_add_thread,
  atomic_compare_swap_thread,
  atomic_swap_thread,
  rank_malloc,
  rank_free,
  win_allocate,
  array_allocate,  // the distributed arrays (dcuda/device/array.cuh)
  array_gptr,
  array_address,
  array_get,
  array_put,
  array_get_range,
  array_copy,
  count_  // number of entries; keep last
};

constexpr const char* call_name(call c) {
  constexpr const char* names[] = {"dcuda_gpu_init",
                                   "dcuda_gpu_finish",
                                   "dcuda_comm_barrier",
                                   "dcuda_win_create",
                                   "dcuda_win_free",
                                   "dcuda_notify",
                                   "dcuda_put",
                                   "dcuda_put_notify",
                                   "dcuda_win_flush",
                                   "dcuda_test_notifications",
                                   "dcuda_wait_notifications",
                                   "dcuda_start_cpu_timer",
                                   "dcuda_stop_cpu_timer",
                                   "dcuda_log",
                                   "dcuda_ping_host",
                                   "dcuda_comm_size",
                                   "dcuda_comm_rank",
                                   "the poll of its peer rings (inside a dcuda call that waits)",
                                   "dcuda_pack",
                                   "dcuda_unpack",
                                   "dcuda_put_typed",
                                   "dcuda_put_notify_typed",
                                   "dcuda_put_thread",
                                   "dcuda_put_notify_thread",
                                   "dcuda_notify_thread",
                                   "dcuda_test_notifications_thread",
                                   "dcuda_wait_notifications_thread",
                                   "dcuda_get",
                                   "dcuda_put_gptr",
                                   "dcuda_put_notify_gptr",
                                   "dcuda_gptr_add",
                                   "dcuda_atomic_fetch_add",
                                   "dcuda_atomic_compare_swap",
                                   "dcuda_atomic_swap",
                                   "dcuda_atomic_fetch_add_thread",
                                   "dcuda_atomic_compare_swap_thread",
                                   "dcuda_atomic_swap_thread",
                                   "dcuda_malloc",
                                   "dcuda_free",
                                   "dcuda_win_allocate",
                                   "dcuda::array::allocate",
                                   "dcuda::array::gptr",
                                   "dcuda::array::address",
                                   "dcuda::array::get",
                                   "dcuda::array::put",
                                   "dcuda::array::get_range",
                                   "dcuda::copy"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<int>(call::count_));
  const auto i = static_cast<unsigned>(c);
  return i < static_cast<unsigned>(call::count_) ? names[i] : "unknown dcuda call";
}

// Whether a put call notifies its target (dcuda_put_notify, its thread-scoped form and its form
// on a global pointer).
DCUDA_HD constexpr bool put_call_notifies(call c) {
  return c == call::put_notify || c == call::put_notify_thread || c == call::put_notify_gptr;
}

}  // namespace dcuda::protocol
