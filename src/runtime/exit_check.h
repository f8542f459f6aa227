// A process of a job that returns from main (or calls exit) while it still has a live dcuda
// context leaves the others waiting for it in their collectives and runs. An atexit hook, set up
// with the first context, names it instead: "dcuda: error: process P returned from main without
// dcuda_host_finish", then the program's error handler (DCUDA_ERROR_INVALID_STATE), then exit
// status 1 without finalising MPI (which would wait for the others), so that the launcher ends
// the job. A process running alone ends as it wanted to.
#pragma once

#include <optional>
#include <string>

namespace dcuda::runtime {

// A context of a job of `process_count` processes is live in process `process_index`; sets up the
// hook the first time.
void note_live_context(int process_index, int process_count);
// A live context of a job of `process_count` processes was finished.
void note_finished_context(int process_count);

// What the hook reports now: nothing where no context of a job of several processes is live.
std::optional<std::string> unfinished_context_report();

}  // namespace dcuda::runtime
