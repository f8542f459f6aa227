// The host proxy's side of the delivery agent's queue (protocol/delivery_queue.h): it submits copy
// jobs and learns which are finished. Only the proxy thread uses it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dcuda/detail/protocol/delivery_queue.h"

namespace dcuda::runtime {

class delivery_jobs {
 public:
  // `queue`: the host view of a queue the device state has zeroed for this run (null when the
  // kernel runs no agent: then no job may be submitted).
  explicit delivery_jobs(protocol::delivery_queue* queue) : queue_(queue) {}

  // Whether `more` jobs can be submitted now.
  bool has_room(std::uint32_t more = 1) const;

  // Submit a job; returns its number. `count`: a notification counter (device memory) the agent
  // adds one to after the data, and the scope of its release (protocol::job_count), or none.
  // From host memory, copies of at most delivery_inline_bytes travel in the job itself (the
  // source may be reused at once).
  std::uint32_t copy_from_host(void* destination, const void* source, std::size_t bytes,
                               protocol::job_count count = {});
  std::uint32_t copy_from_device(void* destination, const void* source, std::size_t bytes);
  std::uint32_t count(protocol::job_count count);
  // A typed put's piece (protocol/typed_piece.h): `piece` holds the typed_piece_job, then the
  // piece's `bytes` packed bytes. `count` as for copy_from_host, after the unpack.
  std::uint32_t pack_piece(void* piece, std::size_t bytes);
  std::uint32_t unpack_piece(void* piece, std::size_t bytes, protocol::job_count count);

  bool finished(std::uint32_t job) const;
  bool all_finished() const { return finished_count() == issued_; }
  std::uint32_t issued() const { return issued_; }
  std::uint32_t finished_count() const;

 private:
  std::uint32_t submit_copy(void* destination, const void* source, std::size_t bytes,
                            protocol::job_count count, bool source_on_host);
  std::uint32_t submit_piece(protocol::delivery_job_kind kind, void* piece, std::size_t bytes,
                             protocol::job_count count);
  std::uint32_t submit(const protocol::delivery_job& job);

  protocol::delivery_queue* queue_;
  std::uint32_t issued_ = 0;
};

}  // namespace dcuda::runtime
