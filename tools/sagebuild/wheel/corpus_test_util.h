// Test-only helpers: locate the shared wheel corpus and read its TSV vectors.
// Tests that use them start with SB_SKIP_WITHOUT_CORPUS() (common/corpus_test.h).
#pragma once

#include <catch2/catch.hpp>

#include "sagebuild/common/corpus_test.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace sb::wheel::testing {

using sb::testing::corpus_dir;

using Row = std::map<std::string, std::string>;

// Rows of a tab-separated file keyed by the header line's column names.
inline std::vector<Row> read_tsv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  INFO("reading " << path.string());
  REQUIRE(in.good());
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::size_t start = 0;
    while (true) {
      std::size_t tab = line.find('\t', start);
      cells.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
      if (tab == std::string::npos) return cells;
      start = tab + 1;
    }
  };
  std::string line;
  std::getline(in, line);
  auto header = split(line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto cells = split(line);
    Row row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = i < cells.size() ? cells[i] : "";
    rows.push_back(std::move(row));
  }
  return rows;
}

inline void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The vectors write unprintable characters as Python string escapes
// ("foo\n", "foo_b\xe1r" = U+00E1): decode them to the UTF-8 text meant.
inline std::string py_unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    char e = s[++i];
    if (e == 'n')
      out += '\n';
    else if (e == 't')
      out += '\t';
    else if (e == 'r')
      out += '\r';
    else if (e == '\\')
      out += '\\';
    else if ((e == 'x' && i + 2 < s.size()) || (e == 'u' && i + 4 < s.size())) {
      std::size_t n = e == 'x' ? 2 : 4;
      append_utf8(out, static_cast<unsigned>(std::stoul(s.substr(i + 1, n), nullptr, 16)));
      i += n;
    } else {
      out += '\\';
      out += e;
    }
  }
  return out;
}

}  // namespace sb::wheel::testing
