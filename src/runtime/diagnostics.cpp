#include "runtime/diagnostics.h"

#include <mpi.h>

#include <atomic>
#include <cstdio>

namespace dcuda::runtime {
namespace {

std::atomic<int> current_level{static_cast<int>(log_level::warn)};
std::atomic<int> set_index{-1};

void print(const char* prefix, const std::string& text) {
  const int process = known_process_index();
  const std::string process_text =
      process >= 0 ? "process " + std::to_string(process) + ": " : std::string();
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    out += std::string("dcuda: ") + prefix + ": " + process_text + text.substr(begin, end - begin) +
           "\n";
    begin = end + 1;
  }
  // One write per message, so that the lines of concurrent processes do not interleave mid-line.
  std::fwrite(out.data(), 1, out.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void set_log_level(log_level level) {
  current_level.store(static_cast<int>(level));
}

bool log_enabled(log_level level) {
  return static_cast<int>(level) <= current_level.load();
}

void set_process_index(int index) {
  set_index.store(index);
}

int known_process_index() {
  const int index = set_index.load();
  if (index >= 0) return index;
  int initialised = 0;
  int finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (initialised == 0 || finalised != 0) return -1;
  int rank = -1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) return -1;
  return rank;
}

void warn(const std::string& text) {
  print("warning", text);
}

void info(const std::string& text) {
  if (log_enabled(log_level::info)) print("info", text);
}

void trace(const std::string& text) {
  if (log_enabled(log_level::trace)) print("trace", text);
}

}  // namespace dcuda::runtime
