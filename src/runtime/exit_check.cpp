#include "runtime/exit_check.h"

#include <cstdlib>
#include <memory>
#include <mutex>

#include "runtime/error.h"

namespace dcuda::runtime {
namespace {

struct live_state {
  std::mutex mutex;
  int live_in_jobs = 0;  // live contexts of jobs of several processes
  int process_index = -1;
  int process_count = 0;
};

// Never destroyed: the hook runs among the destructors of static objects.
live_state& state() {
  static live_state& kept = *std::make_unique<live_state>().release();
  return kept;
}

extern "C" void check_at_exit() {
  if (const std::optional<std::string> report = unfinished_context_report()) {
    report_and_exit("dcuda_host_finish", DCUDA_ERROR_INVALID_STATE, *report);
  }
}

}  // namespace

void note_live_context(int process_index, int process_count) {
  static std::once_flag hooked;
  std::call_once(hooked, [] { std::atexit(check_at_exit); });
  std::lock_guard<std::mutex> lock(state().mutex);
  if (process_count > 1) ++state().live_in_jobs;
  state().process_index = process_index;
  state().process_count = process_count;
}

void note_finished_context(int process_count) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (process_count > 1 && state().live_in_jobs > 0) --state().live_in_jobs;
}

std::optional<std::string> unfinished_context_report() {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (state().live_in_jobs == 0) return std::nullopt;
  return "process " + std::to_string(state().process_index) +
         " returned from main (or called exit) without dcuda_host_finish while it ran in a job "
         "of " +
         std::to_string(state().process_count) +
         " processes; the others would wait for it. Call dcuda_host_finish before returning";
}

}  // namespace dcuda::runtime
