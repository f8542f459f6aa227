#include "runtime/error_text.h"

#include <sstream>

#include "dcuda/detail/protocol/heap_layout.h"
#include "dcuda/detail/protocol/peer_ring.h"

namespace dcuda::runtime {
namespace {

const char* comm_name(std::int64_t comm) {
  switch (comm) {
    case 0:
      return "DCUDA_COMM_WORLD";
    case 1:
      return "DCUDA_COMM_DEVICE";
    default:
      return "an unknown communicator";
  }
}

// "process 1" or "processes 1 3" for the bits of `mask` (bit p: process p).
std::string process_list(std::uint32_t mask) {
  std::ostringstream text;
  text << ((mask & (mask - 1u)) != 0u ? "processes" : "process");
  for (int p = 0; p < 32; ++p) {
    if ((mask >> p & 1u) != 0u) text << " " << p;
  }
  return text.str();
}

// A bad_heap_free report's sentence: values are the pointer's rank, window and offset, and the
// reason (protocol::heap_free_refusal).
std::string describe_heap_free_refusal(const std::int64_t* v) {
  using protocol::heap_free_refusal;
  std::ostringstream text;
  const std::string pointer = "the pointer {rank " + std::to_string(v[0]) + ", window " +
                              std::to_string(v[1]) + ", offset " + std::to_string(v[2]) + "}";
  switch (static_cast<heap_free_refusal>(v[3])) {
    case heap_free_refusal::not_heap:
      text << pointer << " does not name a heap (dcuda_malloc gives pointers into the heap window "
           << protocol::heap_window << ")";
      break;
    case heap_free_refusal::other_rank:
      text << pointer << " names rank " << v[0]
           << "'s heap; each rank frees only what it allocated itself";
      break;
    case heap_free_refusal::not_allocated:
      text << "no allocation starts at " << pointer << " (never allocated, or freed already)";
      break;
    case heap_free_refusal::inside_block:
      text << pointer << " points inside an allocation, not at its first byte";
      break;
    case heap_free_refusal::outside_segment:
      text << pointer << " is past the end of this rank's heap";
      break;
    case heap_free_refusal::heap_window_free:
      text << "window " << v[1]
           << " is the heaps' window, which lives as long as the host context; free its "
              "allocations with dcuda_free";
      break;
    default:
      text << pointer << " was refused (reason " << v[3] << ")";
      break;
  }
  return text.str();
}

}  // namespace

std::string describe_collective_mismatch(std::int64_t process, std::int64_t call,
                                         std::int64_t other_process, std::int64_t other_call) {
  const auto name = [](std::int64_t c) {
    return protocol::call_name(static_cast<protocol::call>(c));
  };
  return "collective calls of DCUDA_COMM_WORLD differ: process " + std::to_string(process) +
         " called " + name(call) + " while process " + std::to_string(other_process) + " called " +
         name(other_call) + " (every rank must make the same collective calls in the same order)";
}

dcuda_error_code code_of(const protocol::error_report& report) {
  const auto code = static_cast<protocol::error_code>(report.code);
  return code == protocol::error_code::collective_mismatch ||
                 code == protocol::error_code::bad_ring_record
             ? DCUDA_ERROR_PEER
             : DCUDA_ERROR_DEVICE_CALL;
}

std::string describe_error(const protocol::error_report& report,
                           const std::vector<int>& ring_senders) {
  using protocol::error_code;
  const auto* v = report.values;
  std::ostringstream text;
  text << "rank " << report.rank << " (thread " << report.thread << ") in "
       << protocol::call_name(static_cast<protocol::call>(report.call_id)) << ": ";
  switch (static_cast<error_code>(report.code)) {
    case error_code::partial_rank_call:
      text << "called by " << v[0] << " of the rank's " << v[1]
           << " threads; this call must be made by all threads of the rank together";
      break;
    case error_code::not_in_shared_memory:
      text << "the dcuda_state at 0x" << std::hex << v[0] << std::dec
           << " is not in shared memory; declare it `__shared__ dcuda_state gst;`";
      break;
    case error_code::bad_communicator:
      text << "communicator " << v[0]
           << " is neither DCUDA_COMM_WORLD (0) nor DCUDA_COMM_DEVICE (1)";
      break;
    case error_code::tag_out_of_range:
      text << "tag " << v[0] << " is outside 0..255";
      break;
    case error_code::rank_out_of_range:
      text << "rank " << v[0] << " is outside 0.." << v[1] - 1 << " of " << comm_name(v[2]);
      break;
    case error_code::bad_window:
      text << "window handle " << v[0]
           << " is not a window this rank holds (never created, already freed, or "
              "DCUDA_WIN_NONE)";
      break;
    case error_code::window_not_on_target:
      text << "target rank " << v[1] << " has no window for handle " << v[0]
           << " (it freed the window, or never created it)";
      break;
    case error_code::target_range_outside:
      text << "offset " << v[0] << " + size " << v[1] << " exceeds the " << v[2]
           << "-byte window of target rank " << v[3];
      break;
    case error_code::source_outside_window:
      text << "source buffer 0x" << std::hex << v[0] << std::dec << " (+" << v[3]
           << " bytes) is not inside the caller's window [0x" << std::hex << v[1] << ", 0x"
           << v[1] + v[2] << std::dec << ")";
      break;
    case error_code::negative_size:
      text << "size " << v[0] << " is negative";
      break;
    case error_code::negative_count:
      text << "count " << v[0] << " is negative";
      break;
    case error_code::collective_mismatch:
      text << describe_collective_mismatch(v[0], report.call_id, v[1], v[2]);
      break;
    case error_code::bad_ring_record: {
      const auto ring = static_cast<std::size_t>(v[0]);
      text << "the record in its peer ring from ";
      if (ring < ring_senders.size()) {
        text << "process " << ring_senders[ring];
      } else {
        text << "peer GPU " << ring;
      }
      text << " is not one dcuda writes: ";
      if (v[1] > protocol::ring_carry_limit) {
        text << "a payload of " << v[1] << " bytes (the ring carries at most "
             << protocol::ring_carry_limit << ")";
      } else {
        text << "a payload of " << v[1] << " bytes at offset " << v[2] << " ends outside the "
             << (v[3] & 0xffffffff) << "-byte window in slot " << (v[3] >> 32);
      }
      text << "; nothing was written (is every process of the node running the same program and "
              "dcuda version?)";
      break;
    }
    case error_code::null_window_base:
      text << "the window's base is NULL but its size is " << v[1];
      break;
    case error_code::bad_datatype:
      text << "datatype {id " << v[0] << ", generation " << v[1]
           << "} is not a committed datatype (never created, not committed with "
              "dcuda_type_commit, freed, or DCUDA_DATATYPE_NULL)";
      break;
    case error_code::datatype_overlaps:
      text << v[2] << " elements of datatype {id " << v[0] << ", generation " << v[1]
           << "} cover some byte twice";
      if (v[3] != 0) text << " (element " << v[3] << " meets element 0)";
      text << ", so they cannot lay out data written to memory (which of the two writes lands "
              "would be undecided)";
      break;
    case error_code::typed_span_too_large:
      text << v[0] << " elements of a datatype of " << v[1] << " bytes and extent " << v[2]
           << " span more bytes than a typed call can address";
      break;
    case error_code::typed_sizes_differ:
      text << "the source's " << v[0] << " bytes (count x its type's size) are not the target's "
           << v[1] << " bytes";
      break;
    case error_code::bad_host_window:
      text << "window handle " << v[0]
           << " is not a host window of this run (created with dcuda_host_win_create before the "
              "run, not freed)";
      break;
    case error_code::thread_call_off_thread_zero:
      text << "called by thread " << v[0]
           << "; the thread-scoped calls (..._thread) are made by thread 0 of the rank, which "
              "keeps the rank's notification and route bookkeeping";
      break;
    case error_code::thread_put_too_large:
      text << "size " << v[0] << " is larger than the " << v[1]
           << " bytes a thread-scoped put moves; use dcuda_put or dcuda_put_notify, which the "
              "rank's threads make together";
      break;
    case error_code::target_off_node:
      text << "target rank " << v[0]
           << " is reached only through the network; get and the remote atomics reach the ranks "
              "of this node (this GPU and its peer GPUs)";
      break;
    case error_code::misaligned_atomic:
      text << "the word at offset " << v[0] << " (address 0x" << std::hex << v[2] << std::dec
           << ") is not aligned to its " << v[1]
           << " bytes (the window's base and the offset must both be multiples of it)";
      break;
    case error_code::uneven_window:
      if (v[3] == 0) {
        text << "rank " << v[1] << "'s part of window " << v[0]
             << " is empty: a pointer into it cannot be moved";
        break;
      }
      text << "the pointer crosses into rank " << v[1] << ", whose part of window " << v[0]
           << " is " << v[2] << " bytes, not the " << v[3]
           << " its arithmetic steps by; arithmetic across ranks needs a window where every rank "
              "exposes the same size";
      break;
    case error_code::heap_exhausted:
      if (v[2] == 0) {
        text << "no rank has a heap (DCUDA_HEAP_BYTES is 0); " << v[0] << " bytes were asked for";
        break;
      }
      text << v[0] << " bytes asked for, but the largest free block of this rank's heap of " << v[2]
           << " bytes is " << v[1]
           << " (blocks are powers of two; DCUDA_HEAP_BYTES sets the heap's size)";
      break;
    case error_code::bad_heap_free:
      text << describe_heap_free_refusal(v);
      break;
    case error_code::bad_distribution:
      if (v[0] > 0 && v[1] > 0) {
        text << "the distribution is for " << v[0] << " ranks, but the array's communicator has "
             << v[2];
        break;
      }
      text << "the distribution deals to " << v[0] << " ranks in blocks of " << v[1]
           << " elements; it needs at least one rank and blocks of at least one element";
      break;
    case error_code::array_index_outside:
      text << "elements [" << v[0] << ", " << v[0] << " + " << v[1] << ") are outside the array of "
           << v[2] << " elements";
      break;
    default:
      text << "error code " << report.code;
      break;
  }
  return text.str();
}

std::string describe_wait(const protocol::wait_record& record, int device_ranks) {
  using protocol::wait_kind;
  std::ostringstream text;
  const char* call = protocol::call_name(static_cast<protocol::call>(record.call_id));
  switch (static_cast<wait_kind>(record.kind)) {
    case wait_kind::notifications:
      text << call << "(tag " << record.detail << ", count " << record.needed
           << "): " << record.available << " of " << record.needed << " notifications arrived";
      break;
    case wait_kind::barrier:
      text << call << ": barrier " << record.detail << " of DCUDA_COMM_DEVICE, " << record.available
           << " of " << device_ranks << " ranks arrived";
      break;
    case wait_kind::channel_room:
      text << call << ": waiting for room in the " << (record.detail == 0 ? "command" : "log")
           << " channel to the host (host not draining it)";
      break;
    case wait_kind::host_ack:
      text << call << ": waiting for the host to answer operation " << record.detail
           << " (answered up to " << record.available << ")";
      break;
    case wait_kind::world_collective:
      text << call << ": waiting for the other processes (collective " << record.detail
           << " of DCUDA_COMM_WORLD)";
      break;
    case wait_kind::node_barrier: {
      const std::uint32_t missing = record.needed & ~record.available;
      text << call << ": waits in collective " << record.detail
           << " of DCUDA_COMM_WORLD (met on the GPUs of the node) for " << process_list(missing)
           << ", which " << ((missing & (missing - 1u)) != 0u ? "have" : "has") << " not joined it";
      break;
    }
    case wait_kind::ring_room:
      text << call << ": waiting for room in the ring of a rank on another GPU (256 notifications "
           << "to it are not taken yet; it takes them in its next dcuda wait)";
      break;
    case wait_kind::finished:
      text << "finished (returned from dcuda_gpu_finish)";
      break;
    default:
      text << "not in a dcuda wait (computing, or waiting only briefly)";
      break;
  }
  return text.str();
}

std::string named_by_call(const std::string& text, const std::string& call) {
  const std::string served = "dcuda_host_run: ";
  const std::string named = call + ": ";
  if (text.rfind(served, 0) == 0) return named + text.substr(served.size());
  return text.rfind(named, 0) == 0 ? text : named + text;
}

std::string describe_layout_mismatch(std::uint32_t kernel_stamp, std::uint32_t library_stamp) {
  std::ostringstream text;
  text << "dcuda_host_run: the kernel's dcuda calls were compiled against the headers of another "
          "dcuda build (layout 0x"
       << std::hex << kernel_stamp << "; this library's 0x" << library_stamp
       << "): rebuild the kernel with the headers installed beside this library; the run was "
          "stopped";
  return text.str();
}

}  // namespace dcuda::runtime
