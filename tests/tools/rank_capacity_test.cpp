// dcuda-info's ranks per GPU (tools/rank_capacity.h, runtime/launch_config.h) for a reference H100:
// 132 SMs, 65536 registers, 2048 threads, 32 blocks and 228 KiB of shared memory per SM.
#include <stdexcept>
#include <string>

#include "rank_capacity.h"
#include "runtime/error.h"
#include "runtime/launch_config.h"
#include "test_main.h"

namespace {

using namespace dcuda;

const cudaOccDeviceProp& h100() {
  const info::reference_gpu* gpu = info::reference_gpu_for("90");
  if (gpu == nullptr) throw dcuda_test::failure("no reference GPU for sm_90");
  return gpu->properties;
}

info::kernel_resources kernel(int threads, int registers, std::size_t shared) {
  info::kernel_resources resources;
  resources.threads_per_rank = threads;
  resources.registers_per_thread = registers;
  resources.shared_bytes_per_rank = shared;
  return resources;
}

}  // namespace

DCUDA_TEST(registers_limit_wide_ranks) {
  const info::rank_capacity capacity = info::capacity_per_sm(h100(), kernel(256, 64, 1024));
  DCUDA_CHECK_EQ(capacity.by_registers, 4);  // 65536 / (64 * 256)
  DCUDA_CHECK_EQ(capacity.by_threads, 8);    // 2048 / 256
  DCUDA_CHECK_EQ(capacity.ranks_per_sm, 4);
  DCUDA_CHECK_EQ(capacity.limited_by, std::string("registers"));
}

DCUDA_TEST(shared_memory_limits_ranks_with_large_buffers) {
  // 50000 bytes and the 1 KiB the driver reserves per block: 4 of them in 228 KiB.
  const info::rank_capacity capacity = info::capacity_per_sm(h100(), kernel(128, 32, 50000));
  DCUDA_CHECK_EQ(capacity.by_shared_memory, 4);
  DCUDA_CHECK_EQ(capacity.ranks_per_sm, 4);
  DCUDA_CHECK_EQ(capacity.limited_by, std::string("shared memory"));
}

DCUDA_TEST(threads_and_registers_can_limit_together) {
  const info::rank_capacity capacity = info::capacity_per_sm(h100(), kernel(128, 32, 0));
  DCUDA_CHECK_EQ(capacity.ranks_per_sm, 16);
  // Without shared memory of its own a block still takes the 1 KiB the driver reserves.
  DCUDA_CHECK_EQ(capacity.by_shared_memory, 228);
  DCUDA_CHECK(capacity.limited_by.find("registers") != std::string::npos);
  DCUDA_CHECK(capacity.limited_by.find("threads") != std::string::npos);
}

DCUDA_TEST(small_ranks_meet_the_block_limit) {
  const info::rank_capacity capacity = info::capacity_per_sm(h100(), kernel(32, 32, 0));
  DCUDA_CHECK_EQ(capacity.ranks_per_sm, 32);
  DCUDA_CHECK_EQ(capacity.limited_by, std::string("blocks per SM"));
}

DCUDA_TEST(a_rank_too_large_for_the_registers_fits_nowhere) {
  const info::rank_capacity capacity = info::capacity_per_sm(h100(), kernel(1024, 128, 0));
  DCUDA_CHECK_EQ(capacity.ranks_per_sm, 0);
}

DCUDA_TEST(ranks_per_gpu_keep_one_block_for_the_delivery_agent) {
  DCUDA_CHECK_EQ(runtime::plan_ranks(4, 132, std::nullopt, 0).ranks, 528);
  DCUDA_CHECK_EQ(runtime::plan_ranks(4, 132, std::nullopt, 1).ranks, 527);
  DCUDA_CHECK_EQ(runtime::plan_ranks(4, 132, 8, 1).ranks, 8);  // DCUDA_RANKS_PER_DEVICE
  bool refused = false;
  try {
    runtime::plan_ranks(1, 1, std::nullopt, 1);
  } catch (const runtime::error&) {
    refused = true;
  }
  DCUDA_CHECK(refused);
}

DCUDA_TEST(reference_gpus_are_found_by_architecture) {
  DCUDA_CHECK(info::reference_gpu_for("90a") == info::reference_gpu_for("90"));
  DCUDA_CHECK(info::reference_gpu_for("90-real") == info::reference_gpu_for("90"));
  DCUDA_CHECK(info::reference_gpu_for("52") == nullptr);
  DCUDA_CHECK_EQ(h100().numSms, 132);
}
