// Columns of text, aligned: dcuda-info's tables.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace dcuda::info {

class text_table {
 public:
  explicit text_table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }

  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // Each row on its own line, indented by two spaces, columns two spaces apart.
  void print(std::FILE* out = stdout) const {
    std::vector<std::size_t> widths;
    for (const auto& row : rows_) {
      if (widths.size() < row.size()) widths.resize(row.size(), 0);
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (row[c].size() > widths[c]) widths[c] = row[c].size();
      }
    }
    for (const auto& row : rows_) {
      std::string line = " ";
      for (std::size_t c = 0; c < row.size(); ++c) {
        line += ' ';
        line += row[c];
        if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 1, ' ');
      }
      std::fprintf(out, "%s\n", line.c_str());
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace dcuda::info
