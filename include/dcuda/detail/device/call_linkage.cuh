// DCUDA_CALLS_OUT_OF_LINE: whether a kernel gets one shared copy of dcuda_put, dcuda_put_notify,
// dcuda_win_flush and dcuda_wait_notifications, or a copy at every call site (the default).
//
// Define it before including dcuda_device.cu.h. Inlined, each call site carries the call's whole
// code (a put about 1,100 instructions); a kernel that calls them from many places, with its own
// work in between, finds each call's code cold in the instruction cache. Out of line, every call
// site runs the same, warm code, but a call saves and restores registers through local memory in
// every thread of the rank, which a tight loop around one call pays each time. Measured on one
// H100 (docs/notes/performance-history.md, "Code size"): out of line, the stencil, spmv and power
// iteration are 1-3% faster per iteration, the particles 5% slower; the latency of a notified
// access 0.04 us longer, and all ranks streaming 64 KiB puts reach 0.75 of cudaMemcpy instead of
// 0.85.
#pragma once

#ifdef DCUDA_CALLS_OUT_OF_LINE
#define DCUDA_CALL_LINKAGE __noinline__ inline
#else
#define DCUDA_CALL_LINKAGE inline
#endif
