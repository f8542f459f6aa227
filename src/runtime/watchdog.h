// Finds waits that make no progress. The device publishes a rank's wait_record only once the
// wait has spun for a while (device/spin_wait.cuh); the watchdog reads all records and, once one
// has stayed unchanged for the timeout, describes every rank so the user sees who waits for what.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wait_record.h"

namespace dcuda::runtime {

class watchdog {
 public:
  using clock = std::chrono::steady_clock;

  // records: [device_ranks] in host memory; timeout_s 0 turns the watchdog off.
  watchdog(const protocol::wait_record* records, int device_ranks, int rank_start,
           double timeout_s);

  // Reads the records; returns the report when some rank has been stuck for the timeout.
  std::optional<std::string> check(clock::time_point now);

  // One line per group of consecutive ranks in the same state.
  std::string describe_ranks() const;

 private:
  struct seen {
    protocol::wait_record record{};
    clock::time_point since{};
  };
  protocol::wait_record read(int rank) const;

  const protocol::wait_record* records_;
  int device_ranks_;
  int rank_start_;
  double timeout_s_;
  std::vector<seen> seen_;
};

}  // namespace dcuda::runtime
