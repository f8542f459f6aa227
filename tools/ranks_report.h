// How many ranks fit on each GPU and what limits them, by the runtime's own launch planning
// (runtime/launch_config.h): the count dcuda_host_init would choose.
#pragma once

#include <optional>

#include "gpu_report.h"
#include "options.h"

namespace dcuda::info {

// `delivery_agent`: whether this job keeps one block per GPU for the delivery agent (some process
// is reached through the network); unknown: both counts are shown for the reader to choose.
// `max_ranks`: DCUDA_RANKS_PER_DEVICE. Without a GPU, a typical GPU of each built architecture.
void print_ranks_per_gpu(const options& given, const visible_gpus& gpus,
                         std::optional<bool> delivery_agent, std::optional<int> max_ranks);

}  // namespace dcuda::info
