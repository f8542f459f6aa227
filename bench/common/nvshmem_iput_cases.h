// The per-case figures of nvshmem_iput (<results dir>/nvshmem_iput_cases.json, bench/README.md)
// as typed_put_bandwidth reads them where $DCUDA_NVSHMEM_IPUT_RESULT names the file: NVSHMEM's
// strided put (iput) of a layout beside dcuda's typed put of the same layout, N and bytes. The
// file is read as remote_latency reads its anchors' JSON, by its keys and without a JSON library:
// nvshmem_iput writes one flat object per layout and N, each key once.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_report.h"

namespace dcuda_bench {

// One line of the file: a layout at one N.
struct iput_case {
  std::string layout;  // "column", "column_block" or "transpose"
  int n = 0;
  std::size_t bytes = 0;  // moved by one operation: typed_put_bandwidth's Size
  std::string iput;       // the fastest way's call, e.g. nvshmem_double_iput
  double iput_us = -1;    // its time per operation (median); negative where the file has null
};

struct iput_cases {
  std::string measured;  // "NVSHMEM <version>", empty where the file does not say
  std::vector<iput_case> cases;
};

namespace iput_json {

// Where the value of "key" starts in text[from, to): past the key, the colon and any blanks;
// npos where the key is not there.
inline std::size_t value_at(const std::string& text, const std::string& key, std::size_t from,
                            std::size_t to) {
  const std::size_t at = text.find("\"" + key + "\"", from);
  if (at == std::string::npos || at >= to) return std::string::npos;
  std::size_t p = at + key.size() + 2;
  while (p < to && (text[p] == ' ' || text[p] == '\t')) ++p;
  if (p >= to || text[p] != ':') return std::string::npos;
  ++p;
  while (p < to && (text[p] == ' ' || text[p] == '\t')) ++p;
  return p < to ? p : std::string::npos;
}

// The number at `at`; nullopt for null (or anything else that is not a number).
inline std::optional<double> number(const std::string& text, std::size_t at) {
  if (at == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str() + at, &end);
  if (end == text.c_str() + at) return std::nullopt;
  return value;
}

// The string at `at` (the escapes nvshmem_iput writes: \" and \\); empty where there is none.
inline std::string string(const std::string& text, std::size_t at) {
  std::string value;
  if (at == std::string::npos || text[at] != '"') return value;
  for (std::size_t p = at + 1; p < text.size() && text[p] != '"'; ++p) {
    if (text[p] == '\\' && p + 1 < text.size()) ++p;
    value += text[p];
  }
  return value;
}

}  // namespace iput_json

// The file's cases, in its order; nullopt when it cannot be read. A file of another shape reads
// as no cases.
inline std::optional<iput_cases> read_iput_cases(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  iput_cases found;
  const std::size_t cases_at = json.find("\"cases\"");
  if (cases_at == std::string::npos) return found;
  found.measured = iput_json::string(json, iput_json::value_at(json, "measured", 0, cases_at));
  for (std::size_t open = json.find('{', cases_at); open != std::string::npos;
       open = json.find('{', open + 1)) {
    const std::size_t close = json.find('}', open);
    if (close == std::string::npos) break;
    const std::optional<double> n =
        iput_json::number(json, iput_json::value_at(json, "n", open, close));
    const std::optional<double> bytes =
        iput_json::number(json, iput_json::value_at(json, "bytes", open, close));
    iput_case line;
    line.layout = iput_json::string(json, iput_json::value_at(json, "layout", open, close));
    if (line.layout.empty() || !n || !bytes || *n < 1 || *bytes < 0) continue;
    line.n = static_cast<int>(*n);
    line.bytes = static_cast<std::size_t>(*bytes);
    line.iput = iput_json::string(json, iput_json::value_at(json, "iput", open, close));
    line.iput_us =
        iput_json::number(json, iput_json::value_at(json, "iput_us", open, close)).value_or(-1);
    found.cases.push_back(line);
  }
  return found;
}

// dcuda's figure at one N: the typed put's time per put (us, the median and its range).
struct typed_put_time {
  int n = 0;
  std::size_t bytes = 0;  // packed bytes of one put
  double us = 0;
  double us_min = -1;
  double us_max = -1;
};

// The rows of `layout` (the file's name for it) that meet dcuda's figures: one per N of `dcuda`
// that has a line of the same N and Size, in dcuda's order.
struct iput_match {
  std::vector<row> rows;           // Size, dcuda's time per put, NVSHMEM's iput_us
  std::vector<int> n;              // each row's N
  std::vector<std::string> ways;   // each row's fastest way of calling the iput
  std::vector<std::string> notes;  // lines of the layout left out, and why
};

inline iput_match match_iput_cases(const iput_cases& file, const std::string& layout,
                                   const std::vector<typed_put_time>& dcuda) {
  iput_match match;
  for (const typed_put_time& mine : dcuda) {
    for (const iput_case& line : file.cases) {
      if (line.layout != layout || line.n != mine.n) continue;
      const std::string at = "N = " + std::to_string(mine.n);
      if (line.bytes != mine.bytes) {
        match.notes.push_back(at + ": Size " + std::to_string(line.bytes) + " there, " +
                              std::to_string(mine.bytes) + " here; row skipped");
      } else if (line.iput_us <= 0) {
        match.notes.push_back(at + ": no iput time there (null); row skipped");
      } else {
        match.rows.push_back({mine.bytes, mine.us, line.iput_us, mine.us_min, mine.us_max});
        match.n.push_back(mine.n);
        match.ways.push_back(line.iput.empty() ? "?" : line.iput);
      }
      break;  // the first line of the layout and N
    }
  }
  return match;
}

}  // namespace dcuda_bench
