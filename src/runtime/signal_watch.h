// SIGTERM and SIGINT during dcuda_host_run (a scheduler ending the job, Ctrl-C): the handler only
// notes the signal (async-signal-safe: one lock-free atomic store); the main thread's watch loop
// (runtime/watchdog_loop.h) polls for it, stops the ranks as after a standstill, and the run
// fails with DCUDA_ERROR_INTERRUPTED, naming the process and the signal, through the normal
// error path (message, the program's handler, exit status 1). A second signal while the first is
// being handled ends the process at once, by the signal's default action.
#pragma once

#include <csignal>
#include <optional>

#include "runtime/error.h"

namespace dcuda::runtime {

// Installs the handler for SIGTERM and SIGINT for its lifetime (one run), then restores the
// program's own. Not nested: one at a time per process.
class signal_watch {
 public:
  signal_watch();
  signal_watch(const signal_watch&) = delete;
  signal_watch& operator=(const signal_watch&) = delete;
  ~signal_watch();

 private:
  struct sigaction previous_term_ {};
  struct sigaction previous_int_ {};
};

// The signal received since the current (or last) watch began, if any.
std::optional<int> received_signal();

// "SIGTERM", "SIGINT", else "signal N".
const char* signal_name(int signal, char (&buffer)[24]);

// The error a run ends with after `signal` reached process `process_index`.
error interruption_error(int signal, int process_index);

}  // namespace dcuda::runtime
