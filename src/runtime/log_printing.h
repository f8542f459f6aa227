// The log printer's part of a run: what ranks print with dcuda_log (device/log.cuh) reaches
// standard output from the log channel, one line at a time.
#pragma once

#include "runtime/channel_consumer.h"

namespace dcuda::runtime {

// Prints log lines as "[rank R] text" (or "[rank R thread T] text") on standard output; true when
// it printed any.
bool print_log_lines(channel_consumer& logs);

}  // namespace dcuda::runtime
