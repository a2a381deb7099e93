// TextTable: widths from the widest cell per column, two spaces between columns.
// Used by `ropecheck list` and `ropecheck verify`.
#include "core/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <stdexcept>

namespace ropecheck {

TextTable::TextTable(std::vector<std::string> header, std::vector<Align> align)
    : header_(std::move(header)), align_(std::move(align)) {
  align_.resize(header_.size(), Align::left);
}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != header_.size()) {
    throw std::logic_error(fmt::format("TextTable: row of {} cells under a header of {}",
                                       cells.size(), header_.size()));
  }
  rows_.push_back({std::move(cells), {}});
}

void TextTable::add_note(std::string line) {
  if (rows_.empty()) throw std::logic_error("TextTable: a note needs a row above it");
  rows_.back().notes.push_back(std::move(line));
}

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.cells.size(); ++c) {
      width[c] = std::max(width[c], row.cells[c].size());
    }
  }
  const auto print_cells = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += "  ";
      // The last left-aligned column is not padded: no trailing blanks in the output.
      if (align_[c] == Align::right) {
        line += fmt::format("{:>{}}", cells[c], width[c]);
      } else if (c + 1 < cells.size()) {
        line += fmt::format("{:<{}}", cells[c], width[c]);
      } else {
        line += cells[c];
      }
    }
    // Blank trailing cells (a kill-matrix row with no property of its kind at the end) would
    // otherwise leave trailing blanks.
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  print_cells(header_);
  for (const auto& row : rows_) {
    print_cells(row.cells);
    for (const auto& note : row.notes) out << note << '\n';
  }
}

}  // namespace ropecheck
