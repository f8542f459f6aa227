#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace dcuda::info {
namespace {

long long whole_number(const std::string& option, const std::string& text, long long low,
                       long long high) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value < low || value > high) {
    throw std::invalid_argument(option + " takes a whole number in " + std::to_string(low) + ".." +
                                std::to_string(high) + ", not '" + text + "'");
  }
  return value;
}

}  // namespace

const char* const usage =
    "usage: dcuda-info [--threads-per-rank N] [--registers R] [--shared-memory BYTES]\n"
    "                  [--dcuda-SETTING=VALUE ...] [--help]\n"
    "\n"
    "Prints dcuda's version and build configuration, the GPUs and their peer access, how many\n"
    "ranks fit on each GPU and what limits them, and, under mpirun or srun, each process's\n"
    "GPU, CPUs and the path to every other process.\n"
    "\n"
    "  --threads-per-rank N    threads per rank, as given to dcuda_host_init (default 128)\n"
    "  --registers R           registers per thread of your kernel (default: those of a\n"
    "                          minimal dcuda kernel, measured on the GPU)\n"
    "  --shared-memory BYTES   static shared memory per rank of your kernel, its dcuda_state\n"
    "                          included (default: that of the minimal kernel, or with\n"
    "                          --registers a dcuda_state alone)\n"
    "  --dcuda-SETTING=VALUE   a setting as dcuda_host_init reads it (docs/settings.md), e.g.\n"
    "                          --dcuda-ranks-per-device=8; DCUDA_* variables count too\n"
    "\n"
    "Your kernel's registers and shared memory: nvcc -Xptxas -v, or cudaFuncGetAttributes.\n";

options parse_options(int argc, char** argv) {
  options parsed;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const auto value = [&](const std::string& option) -> std::string {
      if (argument.size() > option.size() &&
          argument.compare(0, option.size() + 1, option + "=") == 0) {
        return argument.substr(option.size() + 1);
      }
      if (i + 1 >= argc) throw std::invalid_argument(option + " needs a value");
      return argv[++i];
    };
    const auto is = [&](const std::string& option) {
      return argument == option || argument.compare(0, option.size() + 1, option + "=") == 0;
    };
    if (argument == "--help" || argument == "-h") {
      parsed.help = true;
    } else if (is("--threads-per-rank")) {
      parsed.threads_per_rank = static_cast<int>(
          whole_number("--threads-per-rank", value("--threads-per-rank"), 1, 1024));
    } else if (is("--registers")) {
      parsed.registers =
          static_cast<int>(whole_number("--registers", value("--registers"), 1, 255));
    } else if (is("--shared-memory")) {
      parsed.shared_bytes = static_cast<std::size_t>(
          whole_number("--shared-memory", value("--shared-memory"), 0, 1 << 30));
    } else if (argument.rfind("--dcuda-", 0) == 0) {
      parsed.dcuda_arguments.push_back(argument);
    } else {
      throw std::invalid_argument("unknown argument '" + argument + "'");
    }
  }
  return parsed;
}

}  // namespace dcuda::info
