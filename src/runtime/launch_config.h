// How many ranks a GPU runs. Every rank must be resident at once (ranks wait for each other, so a
// rank that waits for a free multiprocessor would deadlock): the count comes from the occupancy
// of the user's kernel at the requested threads per rank, and the kernel is launched
// cooperatively, which turns an oversized grid into an error instead of a hang. Where some
// process of the job is reached through the network, one resident block is kept back for the
// delivery agent (device/delivery_agent.cuh), which the kernel runs beside the ranks; on a node
// whose GPUs all reach each other by the peer path every resident block is a rank.
#pragma once

#include <optional>
#include <string>

#include "dcuda/host.h"

namespace dcuda::runtime {

struct launch_config {
  int ranks;         // blocks of the persistent kernel
  int ranks_per_sm;  // occupancy found
  int multiprocessors;
};

launch_config plan_launch(dcuda_kernel_t kernel, int device, int threads_per_rank,
                          std::optional<int> max_ranks, int reserved_blocks);

// For DCUDA_DEBUG=INFO: how many of `threads_per_rank`-thread blocks of `kernel` fit one
// multiprocessor of `device` and which resource limits them, and how many of them are `ranks`.
std::string describe_launch(dcuda_kernel_t kernel, int device, int threads_per_rank, int ranks);

}  // namespace dcuda::runtime
