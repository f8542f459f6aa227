// An anchor's figures (NVSHMEM's, NCCL's), read back from the JSON file its own benchmark wrote
// earlier in the same device session, to be printed beside dcuda's.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dcuda_bench {

// An anchor's one-way figures, by size, from its JSON file: the first table whose title holds
// every one of `title_parts`. Empty when the file or table is missing.
inline std::map<std::size_t, double> anchor_figures(const std::string& path,
                                                    const std::vector<std::string>& title_parts) {
  std::ifstream file(path);
  if (!file) return {};
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  const std::string title_key = "\"title\": \"";
  for (std::size_t at = json.find(title_key); at != std::string::npos;
       at = json.find(title_key, at + 1)) {
    const std::size_t title_start = at + title_key.size();
    const std::string title = json.substr(title_start, json.find('"', title_start) - title_start);
    if (!std::all_of(title_parts.begin(), title_parts.end(), [&](const std::string& part) {
          return title.find(part) != std::string::npos;
        })) {
      continue;
    }
    const std::size_t rows_start = json.find("\"rows\": [", title_start);
    const std::size_t rows_end = json.find("]}", rows_start);
    if (rows_start == std::string::npos || rows_end == std::string::npos) return {};
    std::map<std::size_t, double> figures;
    const std::string size_key = "{\"size\": ";
    const std::string value_key = "\"dcuda\": ";
    for (std::size_t r = json.find(size_key, rows_start); r != std::string::npos && r < rows_end;
         r = json.find(size_key, r + 1)) {
      const std::size_t value_at_text = json.find(value_key, r);
      if (value_at_text == std::string::npos || value_at_text > rows_end) break;
      char* end = nullptr;
      const double value = std::strtod(json.c_str() + value_at_text + value_key.size(), &end);
      if (end == json.c_str() + value_at_text + value_key.size()) continue;  // null
      figures[std::strtoull(json.c_str() + r + size_key.size(), nullptr, 10)] = value;
    }
    return figures;
  }
  return {};
}

}  // namespace dcuda_bench
