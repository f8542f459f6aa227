# V3: V2 and the wait out of line
sed -i 's/^__device__ inline void dcuda_wait_notifications(/__device__ __noinline__ inline void dcuda_wait_notifications(/' src/device/notifications.cuh
