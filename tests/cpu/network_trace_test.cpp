// DCUDA_NETWORK_TRACE: the proxy's hop times reach the file, in order, and nothing is written
// when the setting is off.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/network_trace.h"
#include "runtime/settings.h"
#include "test_main.h"

using namespace dcuda;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string field(const std::string& line, int index) {
  std::size_t start = 0;
  for (int i = 0; i < index; ++i) start = line.find(',', start) + 1;
  return line.substr(start, line.find(',', start) - start);
}

}  // namespace

DCUDA_TEST(network_trace_writes_every_hop_in_order) {
  const auto directory = std::filesystem::temp_directory_path() / "dcuda_trace_test";
  std::filesystem::create_directories(directory);
  const std::string prefix = (directory / "run").string();
  protocol::remote_operation op{};
  op.kind = static_cast<std::int32_t>(protocol::operation_kind::put_notify);
  op.source_rank = 3;
  op.target_rank = 140;
  op.size = 4;
  std::string path;
  {
    runtime::network_trace trace(prefix, 1);
    path = trace.path();
    trace.record(runtime::network_trace::hop::taken, op);
    trace.record(runtime::network_trace::hop::posted, op);
    op.size = 0;
    trace.record(runtime::network_trace::hop::arrived, op);
    trace.record(runtime::network_trace::hop::to_agent, op);
  }
  DCUDA_CHECK_EQ(path, prefix + ".1.csv");
  const auto lines = lines_of(path);
  DCUDA_CHECK_EQ(lines.size(), 5u);
  DCUDA_CHECK_EQ(lines[0], std::string("hop,ns,source_rank,target_rank,kind,size"));
  const char* hops[] = {"taken", "posted", "arrived", "to_agent"};
  long long previous = 0;
  for (int i = 0; i < 4; ++i) {
    const std::string& line = lines[static_cast<std::size_t>(i + 1)];
    DCUDA_CHECK_EQ(field(line, 0), std::string(hops[i]));
    const long long ns = std::stoll(field(line, 1));
    DCUDA_CHECK(ns >= previous);
    previous = ns;
    DCUDA_CHECK_EQ(field(line, 2), std::string("3"));
    DCUDA_CHECK_EQ(field(line, 3), std::string("140"));
    DCUDA_CHECK_EQ(field(line, 4), std::string("2"));
    DCUDA_CHECK_EQ(field(line, 5), std::string(i < 2 ? "4" : "0"));
  }
  std::filesystem::remove_all(directory);
}

DCUDA_TEST(network_trace_is_off_without_a_prefix) {
  runtime::network_trace trace("", 0);
  DCUDA_CHECK_EQ(trace.path(), std::string());
  trace.record(runtime::network_trace::hop::taken, protocol::remote_operation{});
  const auto s = runtime::read_settings({"--dcuda-network-trace=/tmp/t"}, {});
  DCUDA_CHECK_EQ(s.network_trace, std::string("/tmp/t"));
  DCUDA_CHECK_EQ(runtime::read_settings({}, {}).network_trace, std::string());
}
