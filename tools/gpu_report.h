// The GPUs this process sees and whether each can reach the others' memory.
#pragma once

#include <string>

namespace dcuda::info {

struct visible_gpus {
  int count = 0;
  std::string missing_reason;  // why none is visible (count 0)
};

visible_gpus find_gpus();

// One row per GPU (name, compute capability, SMs, memory, PCI bus id), then the peer-access
// matrix; without a GPU, "no CUDA GPU visible: <reason>".
void print_gpus(const visible_gpus& gpus);

}  // namespace dcuda::info
