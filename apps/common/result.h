// What a case-study run reports: one line "RESULT {json}" on process 0's standard output, read by
// apps/run_weak_scaling.py. Times are the slowest process's, in milliseconds, over the timed
// iterations only (set-up, warm-up and the result check are outside).
#pragma once

#include <string>

struct app_result {
  std::string app;        // "stencil", ...
  std::string version;    // "dcuda", "mpi", "nccl"
  int gpus = 0;           // processes, one per GPU
  int ranks_per_gpu = 0;  // dcuda ranks (thread blocks) per GPU; 0 for the baselines
  int iterations = 0;
  double time_ms = 0;      // the timed iterations, whole
  double comm_ms = -1;     // the part spent in communication (baselines); -1: not separable (dcuda)
  std::string check;       // "passed", "FAILED" or "off"
  double max_error = 0;    // largest deviation from the CPU reference (when checked)
  double tolerance = 0;    // the largest deviation accepted
  std::string parameters;  // the command line's options, "name=value ..."
};

// The JSON object of one result (no newline).
std::string result_json(const app_result& result);

// Prints "RESULT <json>" and, for a person reading the log, a line in words.
void print_result(const app_result& result);
