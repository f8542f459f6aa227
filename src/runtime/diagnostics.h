// The runtime's own messages on standard error, by level (DCUDA_DEBUG, docs/settings.md):
//   dcuda: warning: <text>   always (something the user should fix, the run goes on)
//   dcuda: info: <text>      DCUDA_DEBUG=INFO or DCUDA_VERBOSE=1: how the job was set up
//   dcuda: trace: <text>     DCUDA_DEBUG=TRACE: also the set-up phases as they pass
// Each text starts with "process P: " once the process's index is known. Errors are not
// messages of this kind: they end the process (host_api.cpp).
#pragma once

#include <string>

namespace dcuda::runtime {

enum class log_level { warn = 0, info = 1, trace = 2 };

// Process-wide; WARN until dcuda_host_init reads the settings.
void set_log_level(log_level level);
bool log_enabled(log_level level);

// This process's index among the job's processes, for the messages and the error handler: the
// one set (at the end of dcuda_host_init), else its rank in MPI_COMM_WORLD while MPI is
// initialised, else -1.
void set_process_index(int index);
int known_process_index();

// One message at its level; a text of several lines gets the prefix on each line.
void warn(const std::string& text);
void info(const std::string& text);
void trace(const std::string& text);

}  // namespace dcuda::runtime
