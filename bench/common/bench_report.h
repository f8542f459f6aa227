// Output of the dcuda benchmarks: OSU-style tables on standard output, each
// figure beside its reference measured in the same run, and one JSON file per benchmark.
//
//   # dcuda local_latency: notified access (dcuda_put_notify + dcuda_wait_notifications), ...
//   # device: NVIDIA H100 80GB HBM3, driver 580.65.06, 2026-11-21T19:15:00Z, commit <DCUDA_COMMIT>
//   # reference: acquire/release flag ping-pong between 2 blocks of a plain CUDA kernel
//   # Size          dcuda (us)   flag ping-pong (us)      ratio
//   4                    0.61                  0.45       1.36
//
// The JSON file (<results dir>/<benchmark>.json) holds the same rows, the targets and whether
// they were met, and what the run ran on. It is written by hand: no library is needed for this.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dcuda_bench {

// The command line of a benchmark. `--out DIR` (or `--out=DIR`) is the benchmark's own; every
// other argument is handed to dcuda_host_init (e.g. --dcuda-device=1).
struct options {
  std::string program;      // argv[0]
  std::string results_dir;  // --out DIR, else $DCUDA_BENCH_RESULTS, else bench/results
  std::vector<std::string> dcuda_arguments;
};

// Parses the command line; prints usage and exits on --help or a malformed --out.
options parse_options(int argc, char** argv, const char* benchmark, const char* description);

// Without a usable CUDA GPU prints "SKIP: <benchmark>: no CUDA GPU found (<reason>)" and returns
// true; the benchmark then exits with status 0 and writes no JSON.
bool skip_without_gpu(const char* benchmark);

// What the figures were measured on: the current CUDA device (the one dcuda_host_init selected).
struct device_info {
  int index = 0;
  std::string name;
  std::string driver;               // kernel module version (e.g. 580.65.06), else "unknown"
  std::string driver_cuda_version;  // newest CUDA the driver supports (e.g. 13.0)
  std::string runtime_version;      // CUDA runtime this program was built with
  std::string compute_capability;
  int multiprocessors = 0;
};
device_info current_device();

// One OSU table: a column of sizes, the dcuda figure, its same-run reference and their ratio.
struct row {
  std::size_t size_bytes;
  double dcuda;
  double reference;
  // The range of dcuda's repetitions, where the benchmark keeps it (negative: not kept).
  double dcuda_min = -1;
  double dcuda_max = -1;
};

struct table {
  std::string title;             // what dcuda does here, and with how many ranks
  std::string unit;              // "us" or "GB/s"
  std::string reference_name;    // column name of the reference, e.g. "cudaMemcpy"
  std::string reference_detail;  // one line: what the reference does, with how many blocks
  int ranks = 0;                 // dcuda ranks of the run
  int threads_per_rank = 0;
  int reference_blocks = 0;  // thread blocks of the reference (0: not a kernel)
  std::vector<row> rows;
  // What row::size_bytes holds where it is not a message size (e.g. "K0 (us)"): the heading of
  // the first column, and the JSON's "size_column".
  std::string size_column = "Size";
};

// A figure the project has promised (an issue's acceptance criterion).
struct target {
  std::string name;  // e.g. "4 B notified access, one way, 2 ranks"
  std::string unit;  // unit of value and limit: "us" or "ratio"
  double value = 0;
  double limit = 0;
  bool at_most = true;  // met when value <= limit (else when value >= limit)
  bool met() const { return at_most ? value <= limit : value >= limit; }
};

class report {
 public:
  report(std::string benchmark, options options, device_info device);

  // Prints the table (header lines, then one line per row) and keeps it for the JSON file.
  void print(const table& results);

  // Prints "# target: ..." with met/missed and keeps it for the JSON file.
  void check(const target& goal);

  // Writes <results dir>/<benchmark>.json and says where; exits with status 1 when it cannot.
  void write_json() const;

  // What the first column of every table measures: "dcuda" unless a program that measures
  // something else (NVSHMEM, a staged MPI transfer) says so. The JSON key stays "dcuda"; the file
  // then names it in "measured".
  void set_measured_name(std::string name) { measured_name_ = std::move(name); }

 private:
  std::string benchmark_;
  options options_;
  device_info device_;
  std::string date_;    // UTC, ISO 8601, taken when the report is created
  std::string commit_;  // $DCUDA_COMMIT or "unknown"
  std::string measured_name_ = "dcuda";
  std::vector<table> tables_;
  std::vector<target> targets_;
};

// The time now, UTC, as ISO 8601 ("2026-11-26T12:00:00Z"): every result's date.
std::string utc_now_iso8601();

}  // namespace dcuda_bench
