// libFuzzer target: the settings parser (runtime/settings.h), which reads the program's
// arguments and DCUDA_* environment variables in dcuda_host_init.
//
// Input: a count byte, then NUL-separated strings: the first (count % 8) are arguments, the rest
// environment entries NAME=VALUE (without '=': the whole string is the name, the value empty).
// A bad value must be refused with runtime::error (DCUDA_ERROR_SETTING); settings that are read
// must lie in their documented ranges.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_input.h"
#include "runtime/error.h"
#include "runtime/settings.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dcuda_fuzz::input in(data, size);
  const int argument_count = in.take<std::uint8_t>() % 8;
  std::vector<std::string> arguments;
  std::vector<std::pair<std::string, std::string>> environment;
  for (int i = 0; i < argument_count && in.remaining() > 0; ++i) arguments.push_back(in.text());
  while (in.remaining() > 0) {
    const std::string entry = in.text();
    const auto equals = entry.find('=');
    if (equals == std::string::npos) {
      environment.emplace_back(entry, std::string{});
    } else {
      environment.emplace_back(entry.substr(0, equals), entry.substr(equals + 1));
    }
  }

  (void)dcuda::runtime::unknown_settings(arguments, environment);
  try {
    const dcuda::runtime::settings read = dcuda::runtime::read_settings(arguments, environment);
    if (read.device && *read.device < 0) dcuda_fuzz::violated("a negative device");
    if (read.max_ranks_per_device && *read.max_ranks_per_device < 1) {
      dcuda_fuzz::violated("fewer than 1 rank per device");
    }
    if (!(read.wait_timeout_s >= 0.0 && read.wait_timeout_s <= 1e6)) {
      dcuda_fuzz::violated("a wait timeout outside 0..1e6 s");
    }
    if (read.wait_timeout_s > 0 && read.report_wait_after_s > read.wait_timeout_s / 4) {
      dcuda_fuzz::violated("waits reported later than a quarter of the timeout");
    }
  } catch (const dcuda::runtime::error& e) {
    if (e.code() != DCUDA_ERROR_SETTING)
      dcuda_fuzz::violated("a setting refused with another code");
  }
  return 0;
}
