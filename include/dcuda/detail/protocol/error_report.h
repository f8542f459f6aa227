// What the device tells the host when a rank misuses the API. The first rank to fail writes one
// report into host memory, then stops the kernel; the host turns the codes into a sentence.
#pragma once

#include "dcuda/detail/protocol/calls.h"
#include "dcuda/detail/protocol/portability.h"

namespace dcuda::protocol {

enum class error_code : std::uint16_t {
  none,
  partial_rank_call,            // values: calling threads, threads of the rank
  not_in_shared_memory,         // values: address of the dcuda_state
  bad_communicator,             // values: comm
  tag_out_of_range,             // values: tag
  rank_out_of_range,            // values: rank, communicator size, comm
  bad_window,                   // values: handle
  window_not_on_target,         // values: handle, target rank (target freed or never created it)
  target_range_outside,         // values: offset, size, target window size, target rank
  source_outside_window,        // values: source address, own window base, own window size, size
  negative_size,                // values: size
  negative_count,               // values: count
  collective_mismatch,          // values: this process, the other process, the other's call
  bad_ring_record,              // values: ring (sending GPU), payload size, offset,
                                //         window slot << 32 | the window's size
  null_window_base,             // values: base (0), size
  bad_datatype,                 // values: the handle's id, its generation
  datatype_overlaps,            // values: the handle's id, its generation, count, overlap period
  typed_span_too_large,         // values: count, the type's size, its extent
  typed_sizes_differ,           // values: source bytes, target bytes
  bad_host_window,              // values: handle (a host window's slot, not live in this run)
  thread_call_off_thread_zero,  // values: the calling thread
  thread_put_too_large,         // values: size, the largest a thread-scoped put takes
  target_off_node,              // values: target world rank (get and atomics: ranks of the node)
  misaligned_atomic,            // values: offset, the word's size, the word's address
  uneven_window,                // values: handle, rank, its window size, the size stepped by
  heap_exhausted,               // values: bytes asked for, the largest free block, the segment's
                                //         size (0: no heaps)
  bad_heap_free,                // values: the pointer's rank, window and offset, the reason
                                //         (protocol::heap_free_refusal)
  bad_distribution,             // values: the distribution's ranks, its block, the communicator's
                                //         size
  array_index_outside,          // values: first element, count, the array's size
  count_
};

struct error_report {
  std::uint32_t written;   // 0 until the report is complete (release-stored last)
  std::uint16_t call_id;   // protocol::call
  std::uint16_t code;      // protocol::error_code
  std::int32_t rank;       // world rank of the reporting rank
  std::int32_t thread;     // threadIdx.x of the reporting thread
  std::int64_t values[4];  // meaning depends on code
};

}  // namespace dcuda::protocol
