#include "options.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace {

[[noreturn]] void usage_error(const std::string& program, const std::vector<app_option>& options,
                              const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\noptions (--name value):\n", program.c_str(),
               message.c_str());
  for (const auto& option : options)
    std::fprintf(stderr, "  --%-12s %lld  %s\n", option.name.c_str(),
                 static_cast<long long>(option.value), option.meaning.c_str());
  std::exit(2);
}

}  // namespace

app_options::app_options(int argc, char** argv, std::string program,
                         std::vector<app_option> defaults)
    : program_(std::move(program)), options_(std::move(defaults)) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument.rfind("--dcuda-", 0) == 0) continue;
    if (argument == "--help") usage_error(program_, options_, "--help");
    if (argument.rfind("--", 0) != 0)
      usage_error(program_, options_, "unexpected argument '" + argument + "'");
    app_option* option = nullptr;
    for (auto& candidate : options_)
      if (candidate.name == argument.substr(2)) option = &candidate;
    if (option == nullptr) usage_error(program_, options_, "unknown option '" + argument + "'");
    if (i + 1 >= argc) usage_error(program_, options_, "option '" + argument + "' needs a value");
    const char* text = argv[++i];
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
      usage_error(program_, options_,
                  "option '" + argument + "': '" + text + "' is not an integer");
    option->value = value;
  }
}

std::int64_t app_options::get(const std::string& name) const {
  for (const auto& option : options_)
    if (option.name == name) return option.value;
  throw std::logic_error(program_ + ": no option named '" + name + "'");
}

int app_options::get_int(const std::string& name) const {
  const std::int64_t value = get(name);
  if (value < INT_MIN || value > INT_MAX)
    usage_error(program_, options_,
                "option '--" + name + "': " + std::to_string(value) + " does not fit an int");
  return static_cast<int>(value);
}

int run_count(const app_options& options) {
  const std::int64_t runs = options.get("runs");
  if (runs < 1 || runs > 1000)
    throw std::invalid_argument("--runs " + std::to_string(runs) + ": must be 1 to 1000");
  return static_cast<int>(runs);
}

std::string app_options::summary() const {
  std::ostringstream text;
  for (const auto& option : options_)
    text << (text.tellp() > 0 ? " " : "") << option.name << "=" << option.value;
  return text.str();
}

std::vector<app_option> case_study_options(std::vector<app_option> sizes,
                                           const std::vector<app_option>& extras,
                                           const std::string& seed_meaning) {
  sizes.insert(sizes.end(),
               {{"iterations", 100, "timed iterations"},
                {"warmup", 5, "iterations before the timed ones"},
                {"check", 1, "1: compare the result with the CPU reference (small sizes)"},
                {"seed", 42, seed_meaning},
                {"runs", 1,
                 "runs in this launch, each from the same fresh input: warm-up, timed "
                 "iterations, check, result line"}});
  sizes.insert(sizes.end(), extras.begin(), extras.end());
  return sizes;
}
