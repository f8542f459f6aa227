import sys, os
os.chdir(sys.argv[1])
def edit(p, old, new, count=1):
    s=open(p).read()
    assert old in s, (p, old[:60])
    s=s.replace(old,new,count)
    open(p,'w').write(s)
edit('src/device/state.cuh','struct dcuda_state {','''static __shared__ long long dcuda_marks[16];
#define DCUDA_MARK(i) do { if (threadIdx.x == 0) dcuda_marks[i] = clock64(); } while (0)
struct dcuda_state {''')
p='src/device/notified_access.cuh'
edit(p,'''  using namespace dcuda;
  const device::ring_ticket early = device::early_put_ticket(gst, win, rank, size);
  device::enter_collective(gst.ctx, protocol::call::put_notify);
  device::check_tag(gst, protocol::call::put_notify, tag);
  const device::put_route route =
      device::checked_put_route(gst, protocol::call::put_notify, win, rank, offset, size, buffer);
  device::put_along(gst, protocol::call::put_notify, win, route, offset, size, buffer, true, tag,
                    early);''','''  using namespace dcuda;
  DCUDA_MARK(0);
  const device::ring_ticket early = device::early_put_ticket(gst, win, rank, size);
  device::enter_collective(gst.ctx, protocol::call::put_notify);
  device::check_tag(gst, protocol::call::put_notify, tag);
  DCUDA_MARK(1);
  const device::put_route route =
      device::checked_put_route(gst, protocol::call::put_notify, win, rank, offset, size, buffer);
  if (threadIdx.x == 0 && route.destination == nullptr) dcuda_marks[15] = 0;
  DCUDA_MARK(2);
  device::put_along(gst, protocol::call::put_notify, win, route, offset, size, buffer, true, tag,
                    early);
  DCUDA_MARK(4);''')
edit(p,'''    if (threadIdx.x == 0) thread_put(gst, call, route, offset, size, buffer, notify, tag, early);
''','''    if (threadIdx.x == 0) thread_put(gst, call, route, offset, size, buffer, notify, tag, early);
    DCUDA_MARK(3);
''')
p='src/device/notifications.cuh'
s=open(p).read()
i=s.index('__device__ inline void dcuda_wait_notifications')
body=s[i:]
body=body.replace('''  using namespace dcuda;
  device::enter_collective''','''  using namespace dcuda;
  DCUDA_MARK(8);
  device::enter_collective''',1)
body=body.replace('''  if (threadIdx.x == 0) {
    const auto needed''','''  DCUDA_MARK(9);
  if (threadIdx.x == 0) {
    const auto needed''',1)
body=body.replace('''    device::acquire_counted_data(gst, tag, arrived);''','''    DCUDA_MARK(10);
    device::acquire_counted_data(gst, tag, arrived);''',1)
body=body.replace('''  __syncthreads();
}''','''  DCUDA_MARK(11);
  __syncthreads();
  DCUDA_MARK(12);
}''',1)
s=s[:i]+body
open(p,'w').write(s)
p='src/device/ring_poll.cuh'
edit(p,'''  const std::uint32_t head = gst.ring_head[peer];
  const protocol::ring_record record''','''  DCUDA_MARK(13);
  const std::uint32_t head = gst.ring_head[peer];
  const protocol::ring_record record''')
edit(p,'''  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(gst.ring_taken[peer]), "r"(head + 1u)
               : "memory");
  return true;''','''  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(gst.ring_taken[peer]), "r"(head + 1u)
               : "memory");
  DCUDA_MARK(14);
  return true;''')
p='bench/common/notified_ping_pong.cuh'
edit(p,'''      const std::uint64_t start = dcuda::device::global_time_ns();
      for (int i = 0; i < trips; ++i) {
        if (role.starts) {
          send_one_way();
          dcuda_wait_notifications(gst, tag, 1);
        } else {
          dcuda_wait_notifications(gst, tag, 1);
          send_one_way();
        }
      }''','''      const std::uint64_t start = dcuda::device::global_time_ns();
      long long sum[16] = {};
      long long last_return = 0;
      for (int i = 0; i < trips; ++i) {
        if (role.starts) {
          send_one_way();
          dcuda_wait_notifications(gst, tag, 1);
        } else {
          dcuda_wait_notifications(gst, tag, 1);
          send_one_way();
        }
        if (threadIdx.x == 0) {
          sum[1] += dcuda_marks[1] - dcuda_marks[0];
          sum[2] += dcuda_marks[2] - dcuda_marks[1];
          sum[3] += dcuda_marks[3] - dcuda_marks[2];
          sum[4] += dcuda_marks[4] - dcuda_marks[3];
          sum[5] += dcuda_marks[9] - dcuda_marks[8];
          sum[6] += dcuda_marks[10] - dcuda_marks[9];
          sum[7] += dcuda_marks[11] - dcuda_marks[10];
          sum[8] += dcuda_marks[12] - dcuda_marks[11];
          sum[9] += dcuda_marks[14] - dcuda_marks[13];
          sum[10] += dcuda_marks[10] - dcuda_marks[14];
          sum[11] += role.starts ? dcuda_marks[8] - dcuda_marks[4] : dcuda_marks[0] - dcuda_marks[12];
          if (role.starts && i > 0) sum[12] += dcuda_marks[0] - last_return;
          last_return = dcuda_marks[12];
        }
      }
      if (threadIdx.x == 0 && repetition == repetitions - 1 && size <= 8) {
        printf("CYCLES size %d op %d starts %d | put enter %lld route %lld record %lld barrier %lld | wait enter %lld spin %lld acquire %lld barrier %lld | take %lld take->exit %lld | between calls %lld loop %lld\\n",
               size, static_cast<int>(op), role.starts ? 1 : 0, sum[1] / trips, sum[2] / trips,
               sum[3] / trips, sum[4] / trips, sum[5] / trips, sum[6] / trips, sum[7] / trips,
               sum[8] / trips, sum[9] / trips, sum[10] / trips, sum[11] / trips, sum[12] / trips);
      }''')
edit(p,'#include "device/clock.cuh"\n','#include "device/clock.cuh"\n#include <cstdio>\n')
