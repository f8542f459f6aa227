// The case studies' command line: named integer options, "--name value", each with a default.
//
//   app_options options(argc, argv, "stencil_mpi", {{"nx", 512, "points in x"}, ...});
//   int nx = options.get("nx");
//
// Arguments that start with "--dcuda-" belong to the dcuda runtime and are skipped. An unknown
// name, a missing or malformed value, or "--help" prints the options with their defaults; the
// first two end the program with an error that names the argument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct app_option {
  std::string name;
  std::int64_t value;
  std::string meaning;
};

class app_options {
 public:
  app_options(int argc, char** argv, std::string program, std::vector<app_option> defaults);

  std::int64_t get(const std::string& name) const;
  int get_int(const std::string& name) const;  // errors when the value does not fit an int
  // "name=value ..." of every option: the run's parameters, for its result line.
  std::string summary() const;
  const std::string& program() const { return program_; }

 private:
  std::string program_;
  std::vector<app_option> options_;
};

// A case study's options: `sizes`, then the options every case study has (timed and warm-up
// iterations, the check against the CPU reference, the input seed, the runs), then `extras`.
std::vector<app_option> case_study_options(std::vector<app_option> sizes,
                                           const std::vector<app_option>& extras,
                                           const std::string& seed_meaning = "input seed");

// --runs: how many runs one launch makes (1 to 1000; other values throw). Each run starts from the
// device state a fresh launch has (memory zeroed, the input uploaded), so that the runner's median
// of several runs costs one process start, not one per run (a start is 4-8 s on 8 GPUs, the
// timed iterations 0.2 s).
int run_count(const app_options& options);

// The --runs of a launch: run_once() (which returns its exit status) as often as run_count says,
// with reload_input() before every run but the first. Returns 1 when any run's check failed.
template <typename ReloadInput, typename RunOnce>
int each_run(const app_options& options, ReloadInput&& reload_input, RunOnce&& run_once) {
  int status = 0;
  for (int run = 0; run < run_count(options); ++run) {
    if (run > 0) reload_input();
    status |= run_once();
  }
  return status;
}
