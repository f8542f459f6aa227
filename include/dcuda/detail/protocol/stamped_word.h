// A 64-bit word that carries 32 bits of a record in its low half and the record's stamp (a
// sequence number that changes every time the slot is reused) in its high half. A record written
// as stamped words needs no fence between its stores: 8-byte stores and loads are single-copy
// atomic at system scope, so a reader that finds its stamp in every word has the whole record,
// whatever order the words arrived in. NCCL's LL protocol rests on the same property.
//
// Used where one side writes host memory across PCIe and the other polls it: the proxy's jobs for
// the delivery agent (protocol/delivery_queue.h) and a rank's small network operations
// (protocol/compact_operation.h).
#pragma once

#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

DCUDA_HD constexpr std::uint64_t stamped_word(std::uint32_t field, std::uint32_t stamp) {
  return static_cast<std::uint64_t>(stamp) << 32 | field;
}

DCUDA_HD constexpr bool word_has_stamp(std::uint64_t word, std::uint32_t stamp) {
  return static_cast<std::uint32_t>(word >> 32) == stamp;
}

DCUDA_HD constexpr std::uint32_t stamped_field(std::uint64_t word) {
  return static_cast<std::uint32_t>(word);
}

}  // namespace dcuda::protocol
