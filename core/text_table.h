// TextTable: column-aligned plain-text tables for `ropecheck list` and `ropecheck verify`, with
// free-form note lines under a row (a failure's message, counterexample and __REPRO line).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace ropecheck {

class TextTable {
 public:
  enum class Align { left, right };

  // One header cell per column; `align` defaults to left for every column.
  explicit TextTable(std::vector<std::string> header, std::vector<Align> align = {});

  void add_row(std::vector<std::string> cells);
  // A line printed under the last row as is (not aligned, not counted in the widths).
  void add_note(std::string line);

  void print(std::ostream& out) const;

 private:
  struct Row {
    std::vector<std::string> cells;
    std::vector<std::string> notes;
  };
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<Row> rows_;
};

}  // namespace ropecheck
