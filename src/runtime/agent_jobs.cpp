#include "runtime/agent_jobs.h"

#include <cstring>

#include "protocol/portability.h"
#include "runtime/error.h"

namespace dcuda::runtime {

std::uint32_t agent_jobs::finished_count() const {
  if (queue_ == nullptr) return 0;
  return protocol::system_atomic<std::uint32_t>(queue_->done).load(cuda::memory_order_acquire);
}

bool agent_jobs::has_room(std::uint32_t more) const {
  return protocol::agent_has_room(issued_, finished_count(), more);
}

bool agent_jobs::finished(std::uint32_t job) const {
  return protocol::agent_job_finished(job, finished_count());
}

std::uint32_t agent_jobs::copy_from_device(void* destination, const void* source,
                                           std::size_t bytes) {
  return submit_copy(destination, source, bytes, nullptr, false);
}

std::uint32_t agent_jobs::copy_from_host(void* destination, const void* source, std::size_t bytes,
                                         std::uint32_t* counter) {
  return submit_copy(destination, source, bytes, counter, true);
}

std::uint32_t agent_jobs::submit_copy(void* destination, const void* source, std::size_t bytes,
                                      std::uint32_t* counter, bool source_on_host) {
  protocol::agent_job job{};
  job.destination = reinterpret_cast<std::uint64_t>(destination);
  job.bytes = bytes;
  job.counter = reinterpret_cast<std::uint64_t>(counter);
  // Only host memory can be read here to carry the payload in the job.
  if (source_on_host && bytes <= protocol::agent_inline_bytes) {
    job.kind = static_cast<std::uint32_t>(protocol::agent_job_kind::copy_inline);
    std::memcpy(job.payload, source, bytes);
  } else {
    job.kind = static_cast<std::uint32_t>(protocol::agent_job_kind::copy);
    job.source = reinterpret_cast<std::uint64_t>(source);
  }
  return submit(job);
}

std::uint32_t agent_jobs::count(std::uint32_t* counter) {
  protocol::agent_job job{};
  job.kind = static_cast<std::uint32_t>(protocol::agent_job_kind::count_only);
  job.counter = reinterpret_cast<std::uint64_t>(counter);
  return submit(job);
}

std::uint32_t agent_jobs::submit(protocol::agent_job& job) {
  if (queue_ == nullptr) {
    throw error("host proxy: a copy job, but this GPU's kernel runs no delivery agent");
  }
  if (!has_room()) throw error("host proxy: the delivery agent's queue is full");
  const std::uint32_t number = issued_++;
  protocol::agent_job& slot = queue_->jobs[protocol::agent_slot(number)];
  // Fields first, the ticket last (release): the agent reads the fields once it sees the ticket.
  constexpr std::size_t after_ticket = sizeof job.ticket;
  std::memcpy(reinterpret_cast<char*>(&slot) + after_ticket,
              reinterpret_cast<const char*>(&job) + after_ticket, sizeof job - after_ticket);
  protocol::system_atomic<std::uint32_t>(slot.ticket)
      .store(protocol::agent_ticket(number), cuda::memory_order_release);
  return number;
}

}  // namespace dcuda::runtime
