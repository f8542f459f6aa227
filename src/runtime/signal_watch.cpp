#include "runtime/signal_watch.h"

#include <atomic>
#include <cstdio>
#include <string>

namespace dcuda::runtime {
namespace {

// Lock-free, hence safe to store from a signal handler.
std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void note_signal(int signal) {
  int none = 0;
  if (received.compare_exchange_strong(none, signal)) return;
  // A second signal: the first is being handled and the user insists. Both calls are
  // async-signal-safe.
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void install(int signal, struct sigaction& previous) {
  struct sigaction action {};
  action.sa_handler = note_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI and CUDA calls in progress go on; the loop polls the flag
  if (sigaction(signal, &action, &previous) != 0) {
    throw error(DCUDA_ERROR_INTERNAL,
                "dcuda_host_run: sigaction(" + std::to_string(signal) + ") failed");
  }
}

}  // namespace

signal_watch::signal_watch() {
  received.store(0);
  install(SIGTERM, previous_term_);
  try {
    install(SIGINT, previous_int_);
  } catch (...) {
    sigaction(SIGTERM, &previous_term_, nullptr);
    throw;
  }
}

signal_watch::~signal_watch() {
  // Restoring cannot fail for a signal that could be installed; nothing to report if it did.
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

std::optional<int> received_signal() {
  const int signal = received.load();
  if (signal == 0) return std::nullopt;
  return signal;
}

const char* signal_name(int signal, char (&buffer)[24]) {
  if (signal == SIGTERM) return "SIGTERM";
  if (signal == SIGINT) return "SIGINT";
  std::snprintf(buffer, sizeof buffer, "signal %d", signal);
  return buffer;
}

error interruption_error(int signal, int process_index) {
  char buffer[24];
  return error(DCUDA_ERROR_INTERRUPTED,
               "dcuda_host_run: process " + std::to_string(process_index) + " received " +
                   signal_name(signal, buffer) +
                   "; the run was stopped (a second SIGTERM or SIGINT ends the process at once)");
}

}  // namespace dcuda::runtime
