// libFuzzer target: the validation of a window-creation contribution (transport/message_checks.h),
// what each process sends the others in dcuda_win_create over DCUDA_COMM_WORLD: a head with its
// rank count and generations, then one card per rank (base, size, exported allocation).
//
// Input: the sender's rank count (0..64) and first rank, then the contribution's bytes.
// Properties: the check never fails on any bytes, and an accepted contribution has exactly the
// length its ranks make, generations of 23 bits, and windows that lie inside their allocations.
#include <cstdint>
#include <cstring>
#include <limits>

#include "dcuda/detail/protocol/limits.h"
#include "fuzz_input.h"
#include "transport/message_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using dcuda::checks::window_card;
  using dcuda::checks::window_contribution_head;
  using dcuda_fuzz::violated;
  dcuda_fuzz::input in(data, size);
  const int ranks = in.take<std::uint8_t>() % 65;
  const int rank_start = in.take<std::uint16_t>() % 16384;
  const int source_process = in.take<std::uint8_t>() % 16;
  const auto contribution =
      in.bytes(sizeof(window_contribution_head) + 65 * sizeof(window_card) + 64);
  if (!dcuda::checks::check_window_contribution(contribution, source_process, rank_start, ranks)
           .empty()) {
    return 0;
  }

  window_contribution_head head{};
  if (contribution.size() != sizeof head + sizeof(window_card) * static_cast<std::size_t>(ranks)) {
    violated("an accepted contribution whose length is not head + ranks x card");
  }
  std::memcpy(&head, contribution.data(), sizeof head);
  if (head.ranks != ranks) violated("an accepted contribution for another rank count");
  for (const std::uint32_t generation : head.generation) {
    if (generation > 0x7fffffu) violated("an accepted generation wider than 23 bits");
  }
  for (int r = 0; r < ranks; ++r) {
    window_card card{};
    std::memcpy(&card,
                contribution.data() + sizeof head + sizeof card * static_cast<std::size_t>(r),
                sizeof card);
    if (card.size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        (card.base == 0 && card.size != 0) ||
        card.size > std::numeric_limits<std::uint64_t>::max() - card.base) {
      violated("an accepted window without a place in memory");
    }
    if (card.exported == 1 && (card.offset > card.base || card.offset > card.allocation_bytes ||
                               card.size > card.allocation_bytes - card.offset)) {
      violated("an accepted exported window outside its allocation");
    }
  }
  return 0;
}
