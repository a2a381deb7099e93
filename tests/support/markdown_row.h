// The cells of a Markdown table row, found by its first cell: how the report tests read the
// tables a report writes.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace ropecheck::test {

// The cells of the row whose first cell is `first`, trimmed; empty if there is none.
inline std::vector<std::string> markdown_row(const std::string& md, const std::string& first) {
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| " + first + " |", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream parts(line.substr(1));
    for (std::string cell; std::getline(parts, cell, '|');) {
      const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    return cells;
  }
  return {};
}

}  // namespace ropecheck::test
