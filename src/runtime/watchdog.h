// Finds waits that make no progress. The device publishes a rank's wait_record only once the
// wait has spun for a while (device/spin_wait.cuh); the watchdog reads all records.
//
// When some rank's wait has stayed unchanged for the timeout, it describes every rank so the user
// sees who waits for what. The run is stopped only when that is a standstill: every rank either
// waits without progress or has finished. While some rank is outside any dcuda wait (computing),
// waiting ranks may be legitimately idle (a long phase of a few ranks), so the report is a
// warning and the run goes on; it is repeated if the picture changes.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wait_record.h"

namespace dcuda::runtime {

class watchdog {
 public:
  using clock = std::chrono::steady_clock;

  // records: [device_ranks] in host memory; timeout_s 0 turns the watchdog off.
  // `other_processes`, when given, says what this process waits for from the others (the host
  // proxy's view of the current world collective); it is added to every report.
  watchdog(const protocol::wait_record* records, int device_ranks, int rank_start, double timeout_s,
           std::function<std::string()> other_processes = {});

  struct verdict {
    enum kind { fine, warning, standstill } what = fine;
    std::string report;  // for warning and standstill
  };

  // Reads the records and judges them (see above).
  verdict check(clock::time_point now);

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
  std::function<std::string()> other_processes_;
  std::vector<seen> seen_;
  std::string last_warning_;  // a warning is printed again only when it says something new
};

}  // namespace dcuda::runtime
