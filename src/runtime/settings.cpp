#include "runtime/settings.h"

#include <cstdlib>
#include <cerrno>
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
  throw error(std::string("dcuda_host_init: setting ") + name.environment + " (" + name.argument +
              "...) has the bad value '" + text + "'; expected " + expected);
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

}  // namespace

settings read_settings(const std::vector<std::string>& arguments,
                       const std::vector<std::pair<std::string, std::string>>& environment) {
  static constexpr setting_name device{"DCUDA_DEVICE", "--dcuda-device="};
  static constexpr setting_name ranks{"DCUDA_RANKS_PER_DEVICE", "--dcuda-ranks-per-device="};
  static constexpr setting_name timeout{"DCUDA_WAIT_TIMEOUT", "--dcuda-wait-timeout="};
  static constexpr setting_name network{"DCUDA_FORCE_NETWORK", "--dcuda-force-network="};
  static constexpr setting_name verbose{"DCUDA_VERBOSE", "--dcuda-verbose="};
  static constexpr setting_name trace{"DCUDA_NETWORK_TRACE", "--dcuda-network-trace="};
  static constexpr setting_name shared_gpus{"DCUDA_ALLOW_SHARED_GPUS",
                                            "--dcuda-allow-shared-gpus="};
  static constexpr setting_name host_barrier{"DCUDA_HOST_WORLD_BARRIER",
                                             "--dcuda-host-world-barrier="};

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
  if (auto value = lookup(trace, arguments, environment)) result.network_trace = *value;
  if (auto value = lookup(shared_gpus, arguments, environment)) {
    result.allow_shared_gpus = parse_switch(shared_gpus, *value);
  }
  if (auto value = lookup(host_barrier, arguments, environment)) {
    result.host_world_barrier = parse_switch(host_barrier, *value);
  }
  if (result.wait_timeout_s > 0 && result.report_wait_after_s > result.wait_timeout_s / 4) {
    result.report_wait_after_s = result.wait_timeout_s / 4;
  }
  return result;
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
