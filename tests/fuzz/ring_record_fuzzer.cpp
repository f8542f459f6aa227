// libFuzzer target: the peer rings' record decoder (protocol/peer_ring.h), which the target rank
// runs on the two 64-bit words another GPU's rank wrote into its ring.
//
// Input: the two words, the ticket the reader expects and the size of the target's window (8 + 8 +
// 4 + 4 bytes). Properties: a record, and a continuation slot, is complete only when both words
// carry the stamp of the ticket's lap (which differs from the lap before); every bit of a complete
// record is the stamp or a field, so encoding the decoded record under the same ticket gives the
// same words; the decoded fields stay inside the widths the layout gives them; and a record the
// target accepts (ring_record_fault_of) lands inside its window.
#include <cstdint>

#include "dcuda/detail/protocol/peer_ring.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dcuda::protocol;
  dcuda_fuzz::input in(data, size);
  ring_words words{};
  words.first = in.take<std::uint64_t>();
  words.second = in.take<std::uint64_t>();
  const auto ticket = in.take<std::uint32_t>();

  const std::uint32_t stamp = ring_stamp(ticket);
  const bool complete = ring_record_complete(words, ticket);
  const bool stamped = words.first >> 58 == stamp && words.second >> 58 == stamp;
  if (complete != stamped) dcuda_fuzz::violated("completeness is not both words' stamps");
  if (stamp > 63u) dcuda_fuzz::violated("a stamp wider than its 6 bits");
  if (ticket < ring_slots && stamp == 0) dcuda_fuzz::violated("a first-lap stamp of 0");
  if (stamp == ring_stamp(ticket - ring_slots)) {
    dcuda_fuzz::violated("the same stamp as the slot's previous lap");
  }
  // A continuation slot (the bytes a record carries beyond its own eight) is complete only when
  // both of its words carry the stamp and the ticket's low 26 bits.
  const std::uint32_t expected = stamp << 26 | (ticket & 0x3ffffffu);
  const bool continuation_stamped = static_cast<std::uint32_t>(words.first >> 32) == expected &&
                                    static_cast<std::uint32_t>(words.second >> 32) == expected;
  if (continuation_complete(words, ticket) != continuation_stamped) {
    dcuda_fuzz::violated("a continuation slot is complete without both words' stamps");
  }
  if (!complete) return 0;

  const ring_record record = decode_ring_record(words);
  const ring_words again = encode_ring_record(record, ticket);
  if (again.first != words.first || again.second != words.second) {
    dcuda_fuzz::violated("a complete record does not encode back to its words");
  }
  if (record.offset > 0x7fffffffu || record.window_slot > 31u || record.size > 127u) {
    dcuda_fuzz::violated("a decoded field is wider than its place in the record");
  }
  // What the target lands of a record it accepts lies inside its window.
  const auto window_size = in.take<std::uint32_t>();
  if (ring_record_fault_of(record, window_size) == ring_record_fault::none && record.size != 0 &&
      (record.size > ring_carry_limit ||
       std::uint64_t{record.offset} + record.size > window_size)) {
    dcuda_fuzz::violated("an accepted record lands outside the window");
  }
  return 0;
}
