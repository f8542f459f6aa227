// libFuzzer target: the peer rings' record decoder (protocol/peer_ring.h), which the target rank
// runs on the two 64-bit words another GPU's rank wrote into its ring.
//
// Input: the two words, the ticket the reader expects and the size of the target's window (8 + 8 +
// 4 + 4 bytes). Properties: whatever the slot held a lap before (the same words encoded as a
// record or as a continuation slot of ticket - 256) is complete as neither kind for the ticket, and
// a record is never a complete continuation slot of its own ticket nor the other way round; every
// bit of a complete record is the stamp or a field, so encoding the decoded record under the same
// ticket gives the same words; and a record the target accepts (ring_record_fault_of) lands
// inside its window.
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

  // The input's words taken as fields: as the record, or the continuation slot, of the lap before
  // and of this ticket.
  const ring_record fields = decode_ring_record(words);
  const auto low = static_cast<std::uint32_t>(words.first);
  const auto high = static_cast<std::uint32_t>(words.second);
  const std::uint32_t before = ticket - ring_slots;
  for (const ring_words& stale :
       {encode_ring_record(fields, before), encode_continuation(low, high, before)}) {
    if (ring_record_complete(stale, ticket) || continuation_complete(stale, ticket)) {
      dcuda_fuzz::violated("a slot of the lap before is complete for this ticket");
    }
  }
  if (continuation_complete(encode_ring_record(fields, ticket), ticket)) {
    dcuda_fuzz::violated("a record is a complete continuation slot of its own ticket");
  }
  if (ring_record_complete(encode_continuation(low, high, ticket), ticket)) {
    dcuda_fuzz::violated("a continuation slot is a complete record of its own ticket");
  }
  if (!ring_record_complete(words, ticket)) return 0;

  const ring_record record = decode_ring_record(words);
  const ring_words again = encode_ring_record(record, ticket);
  if (again.first != words.first || again.second != words.second) {
    dcuda_fuzz::violated("a complete record does not encode back to its words");
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
