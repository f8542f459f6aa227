# V2: puts and flush out of line (one shared copy per kernel)
sed -i 's/^__device__ inline void dcuda_put(/__device__ __noinline__ inline void dcuda_put(/; s/^__device__ inline void dcuda_put_notify(/__device__ __noinline__ inline void dcuda_put_notify(/; s/^__device__ inline void dcuda_win_flush(/__device__ __noinline__ inline void dcuda_win_flush(/' src/device/notified_access.cuh
