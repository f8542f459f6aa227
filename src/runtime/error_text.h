// Turns what the device reports (error_report, wait_record) into sentences for the user.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dcuda/detail/protocol/error_report.h"
#include "dcuda/host.h"
#include "dcuda/detail/protocol/wait_record.h"

namespace dcuda::runtime {

// What kind of error the report is: a rank's misuse of the device API, or another process's fault
// (a different collective call where the GPUs' leaders compare them, a malformed ring record).
dcuda_error_code code_of(const protocol::error_report& report);

// "rank 3 (thread 0) in dcuda_put_notify: tag 300 is outside 0..255". `ring_senders`: the process
// whose GPU writes each of this GPU's peer rings, in ring order (a malformed record names it).
std::string describe_error(const protocol::error_report& report,
                           const std::vector<int>& ring_senders = {});

// "collective calls of DCUDA_COMM_WORLD differ: process 0 called dcuda_comm_barrier while process 1
// called dcuda_win_create (...)": the host proxies and the GPUs' leaders find it alike.
std::string describe_collective_mismatch(std::int64_t process, std::int64_t call,
                                         std::int64_t other_process, std::int64_t other_call);

// "dcuda_wait_notifications(tag 3, count 2): 1 of 2 notifications arrived"
std::string describe_wait(const protocol::wait_record& record, int device_ranks);

// A served run's message named by the call that started the run: the run's messages (the ranks'
// errors, the watchdog's reports) begin with "dcuda_host_run: ", whichever call started it, and
// `call` takes its place; a message naming no call gets `call` in front.
std::string named_by_call(const std::string& text, const std::string& call);

// "dcuda_host_run: the kernel's dcuda calls were compiled against the headers of another dcuda
// build (layout 0x12ab; this library's 0x34cd): ...": `kernel_stamp` is what the kernel wrote,
// `library_stamp` this library's protocol::context_layout_stamp.
std::string describe_layout_mismatch(std::uint32_t kernel_stamp, std::uint32_t library_stamp);

}  // namespace dcuda::runtime
