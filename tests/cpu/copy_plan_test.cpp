// The split of a block copy into head bytes, aligned vectors and tail bytes.
#include <cstring>
#include <vector>

#include "dcuda/detail/protocol/copy_plan.h"
#include "test_main.h"

using namespace dcuda::protocol;

DCUDA_TEST(copy_plan_covers_every_byte_with_aligned_vectors) {
  for (std::uint64_t src = 0; src < 32; ++src) {
    for (std::uint64_t dst = 0; dst < 32; ++dst) {
      for (std::uint64_t size = 0; size < 100; ++size) {
        const copy_plan plan = plan_copy(4096 + src, 8192 + dst, size);
        DCUDA_CHECK_EQ(plan.head_bytes + plan.vectors * plan.vector_bytes + plan.tail_bytes, size);
        if (plan.vectors > 0) {
          DCUDA_CHECK_EQ((4096 + src + plan.head_bytes) % plan.vector_bytes, 0u);
          DCUDA_CHECK_EQ((8192 + dst + plan.head_bytes) % plan.vector_bytes, 0u);
        }
        DCUDA_CHECK(plan.tail_bytes < plan.vector_bytes || plan.vector_bytes == 1);
        // The widest shared alignment is used.
        std::uint32_t best = 16;
        while (best > 1 && (src % best) != (dst % best)) best /= 2;
        if (best == 2) best = 1;
        if (size >= plan.head_bytes + best) DCUDA_CHECK_EQ(plan.vector_bytes, best);
      }
    }
  }
}

DCUDA_TEST(copy_plan_reproduces_memcpy) {
  std::vector<unsigned char> source(300), target(300);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 7 + 3);
  for (std::uint64_t offset_s : {0u, 1u, 5u, 8u}) {
    for (std::uint64_t offset_d : {0u, 3u, 8u, 16u}) {
      std::fill(target.begin(), target.end(), 0xee);
      const std::uint64_t size = 200;
      const auto* s = source.data() + offset_s;
      auto* d = target.data() + offset_d;
      const copy_plan plan =
          plan_copy(reinterpret_cast<std::uint64_t>(s), reinterpret_cast<std::uint64_t>(d), size);
      std::memcpy(d, s, plan.head_bytes);
      std::memcpy(d + plan.head_bytes, s + plan.head_bytes, plan.vectors * plan.vector_bytes);
      const std::uint64_t body = plan.head_bytes + plan.vectors * plan.vector_bytes;
      std::memcpy(d + body, s + body, plan.tail_bytes);
      DCUDA_CHECK(std::memcmp(d, s, size) == 0);
      DCUDA_CHECK_EQ(static_cast<int>(target[offset_d + size]), 0xee);
    }
  }
}
