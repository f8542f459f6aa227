#include "runtime/settings.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "runtime/error.h"

extern char** environ;

namespace dcuda::runtime {
namespace {

struct setting_name {
  const char* environment;
  const char* argument;  // without the value: "--dcuda-device="
};

[[noreturn]] void reject(const setting_name& name, const std::string& text,
                         const std::string& expected) {
  throw error(DCUDA_ERROR_SETTING, std::string("dcuda_host_init: setting ") + name.environment +
                                       " (" + name.argument + "...) has the bad value '" + text +
                                       "'; expected " + expected);
}

double parse_number(const setting_name& name, const std::string& text, double lowest,
                    double highest) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  // `!(lowest <= value && value <= highest)` also rejects NaN.
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 ||
      !(lowest <= value && value <= highest)) {
    std::ostringstream expected;
    expected << "a number from " << lowest << " to " << highest;
    reject(name, text, expected.str());
  }
  return value;
}

int parse_integer(const setting_name& name, const std::string& text, int lowest) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || value < lowest ||
      value > std::numeric_limits<int>::max()) {
    reject(name, text, "an integer >= " + std::to_string(lowest));
  }
  return static_cast<int>(value);
}

// The value of a setting: the last matching argument, else the environment variable.
std::optional<std::string> lookup(const setting_name& name,
                                  const std::vector<std::string>& arguments,
                                  const std::vector<std::pair<std::string, std::string>>& env) {
  std::optional<std::string> found;
  for (const auto& [key, value] : env) {
    if (key == name.environment) found = value;
  }
  const std::string prefix = name.argument;
  for (const auto& argument : arguments) {
    if (argument.rfind(prefix, 0) == 0) found = argument.substr(prefix.size());
  }
  return found;
}

bool parse_switch(const setting_name& name, const std::string& text) {
  if (text == "1" || text == "on" || text == "yes" || text == "true") return true;
  if (text == "0" || text == "off" || text == "no" || text == "false" || text.empty()) return false;
  reject(name, text, "1 or 0 (also on/off, yes/no, true/false)");
}

// A power of two of bytes from `lowest` to `highest` (the pinned staging hands out powers of two:
// any other size would leave part of each buffer unused). `also_accepted`: the setting's other
// values, which the caller has handled before, for the message ("" where there are none).
std::size_t parse_power_of_two(const setting_name& name, const std::string& text,
                               std::size_t lowest, std::size_t highest,
                               const std::string& also_accepted) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  const auto bytes = static_cast<std::size_t>(value);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || value <= 0 ||
      bytes < lowest || bytes > highest || (bytes & (bytes - 1)) != 0) {
    reject(name, text,
           "a power of two of bytes from " + std::to_string(lowest) + " to " +
               std::to_string(highest) + (also_accepted.empty() ? "" : ", or " + also_accepted));
  }
  return bytes;
}

// A count of bytes, 0 or more, up to the largest std::size_t.
std::size_t parse_bytes(const setting_name& name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || text[0] == '-' ||
      value > std::numeric_limits<std::size_t>::max()) {
    reject(name, text, "a count of bytes, an integer >= 0");
  }
  return static_cast<std::size_t>(value);
}

log_level parse_level(const setting_name& name, const std::string& text) {
  std::string upper = text;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "WARN") return log_level::warn;
  if (upper == "INFO") return log_level::info;
  if (upper == "TRACE") return log_level::trace;
  reject(name, text, "WARN, INFO or TRACE");
}

// The settings (docs/settings.md lists them): the one place that names them.
constexpr setting_name device{"DCUDA_DEVICE", "--dcuda-device="};
constexpr setting_name ranks{"DCUDA_RANKS_PER_DEVICE", "--dcuda-ranks-per-device="};
constexpr setting_name timeout{"DCUDA_WAIT_TIMEOUT", "--dcuda-wait-timeout="};
constexpr setting_name network{"DCUDA_FORCE_NETWORK", "--dcuda-force-network="};
constexpr setting_name verbose{"DCUDA_VERBOSE", "--dcuda-verbose="};
constexpr setting_name debug{"DCUDA_DEBUG", "--dcuda-debug="};
constexpr setting_name network_trace{"DCUDA_NETWORK_TRACE", "--dcuda-network-trace="};
constexpr setting_name host_barrier{"DCUDA_HOST_WORLD_BARRIER", "--dcuda-host-world-barrier="};
constexpr setting_name shared_gpus{"DCUDA_ALLOW_SHARED_GPUS", "--dcuda-allow-shared-gpus="};
constexpr setting_name emulate_nodes{"DCUDA_EMULATE_NODES", "--dcuda-emulate-nodes="};
constexpr setting_name network_chunk{"DCUDA_NETWORK_CHUNK", "--dcuda-network-chunk="};
constexpr setting_name stream_copy_engine_from{"DCUDA_STREAM_COPY_ENGINE_FROM",
                                               "--dcuda-stream-copy-engine-from="};
constexpr setting_name heap_bytes{"DCUDA_HEAP_BYTES", "--dcuda-heap-bytes="};
constexpr setting_name all_settings[] = {
    device,        ranks,        timeout,     network,       verbose,       debug,
    network_trace, host_barrier, shared_gpus, emulate_nodes, network_chunk, stream_copy_engine_from,
    heap_bytes};

// Other DCUDA_* variables that are not a mistake in the environment of a dcuda program.
constexpr const char* other_known_variables[] = {
    // Read by dcuda_model_predict (src/model/model_api.cpp), not by dcuda_host_init.
    "DCUDA_MODEL_FILE",
    // Read by dcuda's scripts, test suite and benchmarks, not by the library.
    "DCUDA_APPS", "DCUDA_APPS_REPEATS", "DCUDA_APPS_SANITIZERS", "DCUDA_APPS_SANITIZER_PROCESSES",
    "DCUDA_APPS_STEPS", "DCUDA_BENCH_MAX_SIZE", "DCUDA_BENCH_ONLY", "DCUDA_BENCH_RESULTS",
    "DCUDA_CHECK_PART", "DCUDA_CHECK_TRACE", "DCUDA_CMAKE_ARGS", "DCUDA_COMMIT",
    "DCUDA_NCCL_RESULT", "DCUDA_NVSHMEM_IPUT_RESULT", "DCUDA_NVSHMEM_RESULT", "DCUDA_PREFIX",
    "DCUDA_SANITIZER_SUITES", "DCUDA_SANITIZER_TOOLS", "DCUDA_SOAK_ROUNDS", "DCUDA_SOAK_SECONDS",
    "DCUDA_TESTS_REGEX", "DCUDA_TEST_SHARE_GPUS", "DCUDA_TEST_SHARE_WINDOWS",
    // CMake options and cache variables: not run-time settings, but harmless in the environment.
    "DCUDA_BUILD_APPS", "DCUDA_BUILD_BENCH", "DCUDA_BUILD_EXAMPLES", "DCUDA_BUILD_TESTS",
    "DCUDA_BUILD_TOOLS", "DCUDA_WARNINGS_AS_ERRORS", "DCUDA_MIN_CUDA_ARCHITECTURE",
    "DCUDA_MULTI_GPU_PROCESSES", "DCUDA_CASE_STUDIES", "DCUDA_CCCL_INCLUDE_DIR",
    "DCUDA_NCCL_INCLUDE_DIR", "DCUDA_NCCL_LIBRARY", "DCUDA_NCCL_ROOT", "DCUDA_NVSHMEM_ROOT",
    "DCUDA_PYTHON3"};

// The warning for `name`, which is not in `known` (the names in the same form).
std::string unknown_setting_text(const std::string& name, const std::vector<std::string>& known) {
  constexpr std::size_t close_enough = 3;
  const std::string* nearest = nullptr;
  std::size_t nearest_distance = close_enough + 1;
  for (const std::string& candidate : known) {
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < nearest_distance) {
      nearest = &candidate;
      nearest_distance = distance;
    }
  }
  std::string text = "unknown setting " + name;
  if (nearest != nullptr) text += " (did you mean " + *nearest + "?)";
  return text;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // One row of the table at a time: row[j] is the distance from a[0..i) to b[0..j).
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> unknown_settings(
    const std::vector<std::string>& arguments,
    const std::vector<std::pair<std::string, std::string>>& environment) {
  std::vector<std::string> known_variables;
  std::vector<std::string> known_arguments;  // without the '='
  for (const setting_name& name : all_settings) {
    known_variables.emplace_back(name.environment);
    const std::string argument = name.argument;
    known_arguments.push_back(argument.substr(0, argument.size() - 1));
  }
  known_variables.insert(known_variables.end(), std::begin(other_known_variables),
                         std::end(other_known_variables));
  std::vector<std::string> warnings;
  for (const auto& entry : environment) {
    const std::string& name = entry.first;
    if (name.rfind("DCUDA_", 0) != 0) continue;
    if (std::find(known_variables.begin(), known_variables.end(), name) != known_variables.end())
      continue;
    warnings.push_back(unknown_setting_text(name, known_variables));
  }
  for (const std::string& argument : arguments) {
    if (argument.rfind("--dcuda-", 0) != 0) continue;
    const std::size_t equals = argument.find('=');
    const std::string name = argument.substr(0, equals);
    const bool known =
        std::find(known_arguments.begin(), known_arguments.end(), name) != known_arguments.end();
    if (!known) {
      warnings.push_back(unknown_setting_text(name, known_arguments));
    } else if (equals == std::string::npos) {
      warnings.push_back("setting " + name + " without a value is ignored; write " + name +
                         "=VALUE, one word");
    }
  }
  return warnings;
}

settings read_settings(const std::vector<std::string>& arguments,
                       const std::vector<std::pair<std::string, std::string>>& environment) {
  settings result;
  if (auto value = lookup(device, arguments, environment)) {
    result.device = parse_integer(device, *value, 0);
  }
  if (auto value = lookup(ranks, arguments, environment)) {
    result.max_ranks_per_device = parse_integer(ranks, *value, 1);
  }
  if (auto value = lookup(timeout, arguments, environment)) {
    result.wait_timeout_s = parse_number(timeout, *value, 0.0, 1e6);
  }
  if (auto value = lookup(network, arguments, environment)) {
    result.force_network = parse_switch(network, *value);
  }
  if (auto value = lookup(verbose, arguments, environment)) {
    result.verbose = parse_switch(verbose, *value);
  }
  if (auto value = lookup(debug, arguments, environment)) {
    result.debug = parse_level(debug, *value);
  }
  // DCUDA_VERBOSE=1 is DCUDA_DEBUG=INFO, and a level of INFO or more prints what it printed.
  if (result.verbose) result.debug = std::max(result.debug, log_level::info);
  result.verbose = result.debug >= log_level::info;
  if (auto value = lookup(network_trace, arguments, environment)) result.network_trace = *value;
  if (auto value = lookup(shared_gpus, arguments, environment)) {
    result.allow_shared_gpus = parse_switch(shared_gpus, *value);
  }
  if (auto value = lookup(host_barrier, arguments, environment)) {
    result.host_world_barrier = parse_switch(host_barrier, *value);
  }
  if (auto value = lookup(emulate_nodes, arguments, environment)) {
    result.emulate_nodes = parse_integer(emulate_nodes, *value, 1);
  }
  if (auto value = lookup(network_chunk, arguments, environment)) {
    result.network_chunk_by_model = *value == "model";
    if (!result.network_chunk_by_model) {
      result.network_chunk_bytes = parse_power_of_two(
          network_chunk, *value, settings::network_chunk_lowest, settings::network_chunk_highest,
          "model (the performance model chooses it)");
    }
  }
  if (auto value = lookup(stream_copy_engine_from, arguments, environment)) {
    result.stream_copy_engine_from = parse_bytes(stream_copy_engine_from, *value);
  }
  if (auto value = lookup(heap_bytes, arguments, environment)) {
    result.heap_bytes = *value == "0"
                            ? 0
                            : parse_power_of_two(heap_bytes, *value, settings::heap_lowest,
                                                 settings::heap_highest, "0 (no heaps)");
  }
  if (result.wait_timeout_s > 0 && result.report_wait_after_s > result.wait_timeout_s / 4) {
    result.report_wait_after_s = result.wait_timeout_s / 4;
  }
  return result;
}

std::size_t network_chunk_from_model(const model::parameters& model) {
  const auto chunk = model::best_network_chunk(model, settings::network_chunk_lowest,
                                               settings::network_chunk_highest);
  if (!chunk) {
    throw error(DCUDA_ERROR_SETTING,
                "dcuda_host_init: setting DCUDA_NETWORK_CHUNK (--dcuda-network-chunk) is 'model', "
                "but the model has no single-message and pipelined fit of the network path's "
                "device initiator (fit it from remote_latency and remote_bandwidth results)");
  }
  return *chunk;
}

std::vector<std::pair<std::string, std::string>> dcuda_environment() {
  std::vector<std::pair<std::string, std::string>> result;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    if (text.rfind("DCUDA_", 0) != 0) continue;
    const auto equals = text.find('=');
    if (equals == std::string::npos) continue;
    result.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }
  return result;
}

}  // namespace dcuda::runtime
