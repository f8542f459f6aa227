#include "runtime/log_printing.h"

#include <cstdio>
#include <string>

namespace dcuda::runtime {

bool print_log_lines(channel_consumer& logs) {
  bool any = false;
  while (auto line = logs.try_take()) {
    any = true;
    std::string out = "[rank " + std::to_string(line->rank);
    if (line->aux >= 0) out += " thread " + std::to_string(line->aux);
    out += "] " + line->text + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (any) {
    std::fflush(stdout);
  } else {
    logs.publish_position();
  }
  return any;
}

}  // namespace dcuda::runtime
