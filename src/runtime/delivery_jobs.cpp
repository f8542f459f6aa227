#include "runtime/delivery_jobs.h"

#include <cstring>
#include <limits>
#include <string>

#include "dcuda/detail/protocol/portability.h"
#include "runtime/error.h"

namespace dcuda::runtime {

std::uint32_t delivery_jobs::finished_count() const {
  if (queue_ == nullptr) return 0;
  return protocol::system_atomic<std::uint32_t>(queue_->done).load(cuda::memory_order_acquire);
}

bool delivery_jobs::has_room(std::uint32_t more) const {
  return protocol::delivery_has_room(issued_, finished_count(), more);
}

bool delivery_jobs::finished(std::uint32_t job) const {
  return protocol::delivery_job_finished(job, finished_count());
}

std::uint32_t delivery_jobs::copy_from_device(void* destination, const void* source,
                                              std::size_t bytes) {
  return submit_copy(destination, source, bytes, {}, false);
}

std::uint32_t delivery_jobs::copy_from_host(void* destination, const void* source,
                                            std::size_t bytes, protocol::job_count count) {
  return submit_copy(destination, source, bytes, count, true);
}

std::uint32_t delivery_jobs::pack_piece(void* piece, std::size_t bytes) {
  return submit_piece(protocol::delivery_job_kind::pack_piece, piece, bytes, {});
}

std::uint32_t delivery_jobs::unpack_piece(void* piece, std::size_t bytes,
                                          protocol::job_count count) {
  return submit_piece(protocol::delivery_job_kind::unpack_piece, piece, bytes, count);
}

std::uint32_t delivery_jobs::submit_piece(protocol::delivery_job_kind kind, void* piece,
                                          std::size_t bytes, protocol::job_count count) {
  if (bytes > std::numeric_limits<std::uint32_t>::max()) {
    throw error("host proxy: a typed piece of " + std::to_string(bytes) +
                " bytes; the delivery agent takes at most 4 GiB - 1 per job");
  }
  protocol::delivery_job job{};
  job.kind = kind;
  job.bytes = static_cast<std::uint32_t>(bytes);
  job.source = reinterpret_cast<std::uint64_t>(piece);
  job.counter = protocol::encode_job_count(count);
  return submit(job);
}

std::uint32_t delivery_jobs::submit_copy(void* destination, const void* source, std::size_t bytes,
                                         protocol::job_count count, bool source_on_host) {
  if (bytes > std::numeric_limits<std::uint32_t>::max()) {
    throw error("host proxy: a copy job of " + std::to_string(bytes) +
                " bytes; the delivery agent takes at most 4 GiB - 1 per job");
  }
  protocol::delivery_job job{};
  job.destination = reinterpret_cast<std::uint64_t>(destination);
  job.bytes = static_cast<std::uint32_t>(bytes);
  job.counter = protocol::encode_job_count(count);
  // Only host memory can be read here to carry the payload in the job.
  if (source_on_host && bytes <= protocol::delivery_inline_bytes) {
    job.kind = protocol::delivery_job_kind::copy_inline;
    // The first byte lowest (both sides little endian). An empty copy may come with a NULL
    // source, which memcpy must not be given even for 0 bytes.
    if (bytes > 0) std::memcpy(&job.source, source, bytes);
  } else {
    job.kind = protocol::delivery_job_kind::copy;
    job.source = reinterpret_cast<std::uint64_t>(source);
  }
  return submit(job);
}

std::uint32_t delivery_jobs::count(protocol::job_count count) {
  protocol::delivery_job job{};
  job.kind = protocol::delivery_job_kind::count_only;
  job.counter = protocol::encode_job_count(count);
  return submit(job);
}

std::uint32_t delivery_jobs::submit(const protocol::delivery_job& job) {
  if (queue_ == nullptr) {
    throw error("host proxy: a copy job, but this GPU's kernel runs no delivery agent");
  }
  if (!has_room()) throw error("host proxy: the delivery agent's queue is full");
  const std::uint32_t number = issued_++;
  const std::uint32_t ticket = protocol::delivery_ticket(number);
  protocol::delivery_job_slot& slot = queue_->jobs[protocol::delivery_slot(number)];
  // Release stores: a copy job's data (pinned memory written before) is visible to an agent that
  // sees the job. Each word carries the ticket, so their order does not matter.
  for (std::uint32_t i = 0; i < protocol::delivery_job_words; ++i) {
    protocol::system_atomic<std::uint64_t>(slot.words[i])
        .store(protocol::stamped_word(protocol::delivery_job_field(job, i), ticket),
               cuda::memory_order_release);
  }
  return number;
}

}  // namespace dcuda::runtime
