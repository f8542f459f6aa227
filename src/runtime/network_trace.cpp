#include "runtime/network_trace.h"

#include <chrono>
#include <cstdio>
#include <fstream>

namespace dcuda::runtime {

namespace {
const char* hop_name(network_trace::hop what) {
  switch (what) {
    case network_trace::hop::taken:
      return "taken";
    case network_trace::hop::posted:
      return "posted";
    case network_trace::hop::arrived:
      return "arrived";
    case network_trace::hop::to_agent:
      return "to_agent";
  }
  return "?";
}
}  // namespace

network_trace::network_trace(std::string prefix, int process)
    : prefix_(std::move(prefix)), process_(process) {
  if (!prefix_.empty()) records_.reserve(capacity);
}

std::string network_trace::path() const {
  return prefix_.empty() ? std::string() : prefix_ + "." + std::to_string(process_) + ".csv";
}

void network_trace::note(hop what, const protocol::remote_operation& op) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  records_.push_back(entry{std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                           op.source_rank, op.target_rank, op.kind, op.size, what});
}

network_trace::~network_trace() {
  if (prefix_.empty()) return;
  std::ofstream out(path());
  out << "hop,ns,source_rank,target_rank,kind,size\n";
  for (const entry& e : records_) {
    out << hop_name(e.what) << ',' << e.ns << ',' << e.source_rank << ',' << e.target_rank << ','
        << e.kind << ',' << e.size << '\n';
  }
  if (!out) std::fprintf(stderr, "dcuda: could not write the network trace %s\n", path().c_str());
}

}  // namespace dcuda::runtime
