// The handles the device calls take: the context dcuda_host_run passes to the kernel, the
// communicators (thesis listing 3.4) and the windows (listing 3.5).
#pragma once

#include "dcuda/detail/protocol/device_context.h"

using dcuda_context_handle = dcuda_context*;

using dcuda_comm = int;
#define DCUDA_COMM_WORLD 0   // every rank of the run
#define DCUDA_COMM_DEVICE 1  // the ranks of the caller's GPU

using dcuda_win = int;
#define DCUDA_WIN_NONE (-1)  // what dcuda_win_create gives when all window slots are in use
