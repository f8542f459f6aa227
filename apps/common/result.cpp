#include "result.h"

#include <cstdio>
#include <sstream>

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string result_json(const app_result& result) {
  std::ostringstream json;
  json.precision(9);
  json << "{\"app\": " << quoted(result.app) << ", \"version\": " << quoted(result.version)
       << ", \"gpus\": " << result.gpus << ", \"ranks_per_gpu\": " << result.ranks_per_gpu
       << ", \"iterations\": " << result.iterations << ", \"time_ms\": " << result.time_ms
       << ", \"comm_ms\": " << result.comm_ms << ", \"check\": " << quoted(result.check)
       << ", \"max_error\": " << result.max_error << ", \"tolerance\": " << result.tolerance
       << ", \"parameters\": " << quoted(result.parameters) << "}";
  return json.str();
}

void print_result(const app_result& result) {
  std::printf("%s %s on %d GPU(s): %d iterations in %.3f ms (%.4f ms each)", result.app.c_str(),
              result.version.c_str(), result.gpus, result.iterations, result.time_ms,
              result.time_ms / (result.iterations > 0 ? result.iterations : 1));
  if (result.comm_ms >= 0) std::printf(", communication %.3f ms", result.comm_ms);
  std::printf("; check %s", result.check.c_str());
  if (result.check != "off")
    std::printf(" (largest deviation from the CPU reference %.3g, tolerance %.3g)",
                result.max_error, result.tolerance);
  std::printf("\nRESULT %s\n", result_json(result).c_str());
  std::fflush(stdout);
}
