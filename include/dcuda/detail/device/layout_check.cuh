// The first check of dcuda_gpu_init: was this kernel compiled against the headers of the library
// that launched it? It reads the two fields that stay first in every version of dcuda_context.
#pragma once

#include "dcuda/detail/protocol/device_context.h"

namespace dcuda::device {

// Every thread of every block: on a mismatch, writes `compiled` (the stamp these headers give)
// where the host looks for it, and traps. No error_report: its place in the context is one of the
// things that may differ. Every thread writes the same word, so no thread has to wait for another.
__device__ inline void check_context_layout(const dcuda_context* dcuda, std::uint32_t compiled) {
  if (dcuda->layout_stamp == compiled) return;
  protocol::system_atomic<std::uint32_t>(*dcuda->layout_mismatch)
      .store(compiled, cuda::memory_order_relaxed);
  __threadfence_system();
  __trap();
}

}  // namespace dcuda::device
