#include "bench_report.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace dcuda_bench {
namespace {

std::string environment_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// The NVIDIA kernel module's version, from the first "digits.digits" word of
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX ... Kernel Module  580.65.06  ...").
std::string kernel_driver_version() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(file, line)) return "unknown";
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    const bool digits_and_dots = word.find_first_not_of("0123456789.") == std::string::npos;
    if (digits_and_dots && word.find('.') != std::string::npos && word.front() != '.') {
      return word;
    }
  }
  return "unknown";
}

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "FAIL: %s: %s\n", call, cudaGetErrorString(status));
    std::exit(1);
  }
}

// JSON string literal of `text`.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// JSON number; NaN and infinity (a reference that could not be measured) become null.
std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

double ratio_of(const row& r) {
  return r.reference != 0 ? r.dcuda / r.reference : NAN;
}

// "target_us", "target_ratio": the key names the unit, so the file reads without a schema.
std::string unit_key(const std::string& unit) {
  std::string key;
  for (const char c : unit) key += (c == '/' || c == ' ') ? '_' : c;
  return key;
}

}  // namespace

options parse_options(int argc, char** argv, const char* benchmark, const char* description) {
  options result;
  result.program = argc > 0 && argv[0] != nullptr ? argv[0] : benchmark;
  result.results_dir = environment_or("DCUDA_BENCH_RESULTS", "bench/results");
  const std::string out_prefix = "--out=";
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--help" || argument == "-h") {
      std::printf(
          "%s: %s\n"
          "usage: %s [--out DIR] [dcuda options, e.g. --dcuda-device=N]\n"
          "  --out DIR  write DIR/%s.json (default: $DCUDA_BENCH_RESULTS, else bench/results)\n",
          benchmark, description, result.program.c_str(), benchmark);
      std::exit(0);
    }
    if (argument == "--out") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: --out needs a directory\n", benchmark);
        std::exit(2);
      }
      result.results_dir = argv[++i];
    } else if (argument.rfind(out_prefix, 0) == 0) {
      result.results_dir = argument.substr(out_prefix.size());
    } else {
      result.dcuda_arguments.push_back(argument);
    }
  }
  if (result.results_dir.empty()) {
    std::fprintf(stderr, "%s: the results directory is empty\n", benchmark);
    std::exit(2);
  }
  return result;
}

bool skip_without_gpu(const char* benchmark) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  std::string reason;
  if (status != cudaSuccess) {
    reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
  } else if (count == 0) {
    reason = "0 devices";
  } else {
    return false;
  }
  std::printf("SKIP: %s: no CUDA GPU found (%s)\n", benchmark, reason.c_str());
  return true;
}

device_info current_device() {
  device_info info;
  check_cuda(cudaGetDevice(&info.index), "cudaGetDevice");
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, info.index), "cudaGetDeviceProperties");
  info.name = properties.name;
  info.compute_capability =
      std::to_string(properties.major) + "." + std::to_string(properties.minor);
  info.multiprocessors = properties.multiProcessorCount;
  int driver = 0;
  int runtime = 0;
  check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  info.driver = kernel_driver_version();
  info.driver_cuda_version = cuda_version_text(driver);
  info.runtime_version = cuda_version_text(runtime);
  return info;
}

report::report(std::string benchmark, options options, device_info device)
    : benchmark_(std::move(benchmark)),
      options_(std::move(options)),
      device_(std::move(device)),
      date_(utc_now_iso8601()),
      commit_(environment_or("DCUDA_COMMIT", "unknown")) {}

void report::print(const table& results) {
  const std::string dcuda_column = measured_name_ + " (" + results.unit + ")";
  const std::string reference_column = results.reference_name + " (" + results.unit + ")";
  std::printf("# dcuda %s: %s\n", benchmark_.c_str(), results.title.c_str());
  std::printf("# device: %s, driver %s, %s, commit %s\n", device_.name.c_str(),
              device_.driver.c_str(), date_.c_str(), commit_.c_str());
  std::printf("# ranks: %d x %d threads; reference: %s\n", results.ranks, results.threads_per_rank,
              results.reference_detail.c_str());
  const std::string size_column = "# " + results.size_column;
  std::printf("%-10s%20s%24s%10s\n", size_column.c_str(), dcuda_column.c_str(),
              reference_column.c_str(), "ratio");
  for (const row& r : results.rows) {
    std::printf("%-10zu%20.2f%24.2f%10.2f\n", r.size_bytes, r.dcuda, r.reference, ratio_of(r));
  }
  std::printf("\n");
  std::fflush(stdout);
  tables_.push_back(results);
}

void report::check(const target& goal) {
  std::printf("# target: %s: %.3f %s, target %s %.3f %s: %s\n", goal.name.c_str(), goal.value,
              goal.unit.c_str(), goal.at_most ? "<=" : ">=", goal.limit, goal.unit.c_str(),
              goal.met() ? "met" : "MISSED");
  std::fflush(stdout);
  targets_.push_back(goal);
}

void report::write_json() const {
  std::set<int> rank_counts;
  for (const table& t : tables_) rank_counts.insert(t.ranks);

  std::ostringstream json;
  json << "{\n";
  json << "  \"benchmark\": " << quoted(benchmark_) << ",\n";
  json << "  \"device\": {\"index\": " << device_.index << ", \"name\": " << quoted(device_.name)
       << ", \"compute_capability\": " << quoted(device_.compute_capability)
       << ", \"multiprocessors\": " << device_.multiprocessors << "},\n";
  json << "  \"driver_version\": " << quoted(device_.driver) << ",\n";
  json << "  \"driver_cuda_version\": " << quoted(device_.driver_cuda_version) << ",\n";
  json << "  \"cuda_runtime_version\": " << quoted(device_.runtime_version) << ",\n";
  json << "  \"date\": " << quoted(date_) << ",\n";
  json << "  \"commit\": " << quoted(commit_) << ",\n";
  if (measured_name_ != "dcuda") json << "  \"measured\": " << quoted(measured_name_) << ",\n";
  json << "  \"rank_counts\": [";
  const char* separator = "";
  for (const int ranks : rank_counts) {
    json << separator << ranks;
    separator = ", ";
  }
  json << "],\n";
  json << "  \"tables\": [";
  separator = "\n";
  for (const table& t : tables_) {
    json << separator << "    {\"title\": " << quoted(t.title) << ", \"unit\": " << quoted(t.unit)
         << ", \"ranks\": " << t.ranks << ", \"threads_per_rank\": " << t.threads_per_rank
         << ",\n     \"reference\": " << quoted(t.reference_name)
         << ", \"reference_detail\": " << quoted(t.reference_detail)
         << ", \"reference_blocks\": " << t.reference_blocks;
    if (t.size_column != "Size") json << ", \"size_column\": " << quoted(t.size_column);
    json << ",\n     \"rows\": [";
    const char* row_separator = "\n";
    for (const row& r : t.rows) {
      json << row_separator << "       {\"size\": " << r.size_bytes
           << ", \"dcuda\": " << number(r.dcuda) << ", \"reference\": " << number(r.reference)
           << ", \"ratio\": " << number(ratio_of(r)) << ", \"unit\": " << quoted(t.unit);
      if (r.dcuda_min >= 0 && r.dcuda_max >= 0) {
        json << ", \"dcuda_min\": " << number(r.dcuda_min)
             << ", \"dcuda_max\": " << number(r.dcuda_max);
      }
      json << "}";
      row_separator = ",\n";
    }
    json << "]}";
    separator = ",\n";
  }
  json << "\n  ],\n";
  json << "  \"targets\": [";
  separator = "\n";
  for (const target& goal : targets_) {
    json << separator << "    {\"name\": " << quoted(goal.name)
         << ", \"value\": " << number(goal.value) << ", \"unit\": " << quoted(goal.unit)
         << ", \"target_" << unit_key(goal.unit) << "\": " << number(goal.limit)
         << ", \"comparison\": " << quoted(goal.at_most ? "at_most" : "at_least")
         << ", \"met\": " << (goal.met() ? "true" : "false") << "}";
    separator = ",\n";
  }
  json << "\n  ]\n}\n";

  const std::filesystem::path directory = options_.results_dir;
  const std::filesystem::path file = directory / (benchmark_ + ".json");
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  std::ofstream out(file);
  out << json.str();
  out.close();
  if (error || !out) {
    std::fprintf(stderr, "FAIL: %s: cannot write %s%s%s\n", benchmark_.c_str(),
                 file.string().c_str(), error ? ": " : "", error ? error.message().c_str() : "");
    std::exit(1);
  }
  std::printf("# results written to %s\n", file.string().c_str());
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace dcuda_bench
