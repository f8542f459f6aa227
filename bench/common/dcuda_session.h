// One dcuda context, dcuda_host_init to dcuda_host_finish, for one benchmark kernel. A benchmark
// may hold several in sequence (e.g. 2 ranks, then all resident ranks), each with its own kernel
// and threads per rank.
#pragma once

#include <string>
#include <vector>

#include "bench_report.h"
#include "dcuda/host.h"

namespace dcuda_bench {

// "process P of N with world ranks [first, end) of W": where dcuda says this process stands, for
// the message of a benchmark that finds a layout it did not expect.
inline std::string describe_rank_info(const dcuda_rank_info& info) {
  return "process " + std::to_string(info.process_index) + " of " +
         std::to_string(info.process_count) + " with world ranks [" +
         std::to_string(info.rank_start) + ", " +
         std::to_string(info.rank_start + info.rank_responsible) + ") of " +
         std::to_string(info.rank_count);
}

class dcuda_session {
 public:
  // `settings` (e.g. "--dcuda-ranks-per-device=2") come after the user's dcuda arguments, so
  // they win where both name the same setting.
  dcuda_session(const options& command_line, dcuda_kernel_t kernel, int threads_per_rank,
                const std::vector<std::string>& settings = {})
      : threads_per_rank_(threads_per_rank) {
    std::vector<std::string> arguments{command_line.program};
    arguments.insert(arguments.end(), command_line.dcuda_arguments.begin(),
                     command_line.dcuda_arguments.end());
    arguments.insert(arguments.end(), settings.begin(), settings.end());
    std::vector<char*> argv;
    for (std::string& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    dcuda_host_init(static_cast<int>(arguments.size()), argv.data(), &context_, kernel,
                    threads_per_rank);
    dcuda_host_get_rank_info(context_, &info_);
  }
  ~dcuda_session() { dcuda_host_finish(context_); }
  dcuda_session(const dcuda_session&) = delete;
  dcuda_session& operator=(const dcuda_session&) = delete;

  int ranks() const { return info_.rank_count; }
  // Where this process stands: its first world rank, its rank count, the process count...
  const dcuda_rank_info& rank_info() const { return info_; }
  int threads_per_rank() const { return threads_per_rank_; }
  dcuda_host_context_handle context() const { return context_; }

  // Runs the kernel once over a copy of `data`, which comes back with the kernel's results.
  template <typename Data>
  void run(Data& data) {
    dcuda_host_run(context_, &data, sizeof data);
  }

 private:
  int threads_per_rank_;
  dcuda_host_context_handle context_ = nullptr;
  dcuda_rank_info info_{};
};

}  // namespace dcuda_bench
