// The kernel whose resource use dcuda-info reports when it is not told one: the ring's calls
// (a window, one dcuda_put_notify to the next rank, one wait), about the least a dcuda kernel
// that communicates uses.
#pragma once

#include <cstddef>

#include "dcuda/host.h"

namespace dcuda::info {

dcuda_kernel_t minimal_kernel();

// The shared memory every dcuda kernel has: its rank's dcuda_state.
std::size_t dcuda_state_bytes();

}  // namespace dcuda::info
