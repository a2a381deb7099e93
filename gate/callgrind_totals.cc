// callgrind.out's events and totals lines (callgrind_totals.h).
#include "gate/callgrind_totals.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"

namespace ropecheck {
namespace {

std::vector<std::string_view> words_after(std::string_view line, std::string_view key) {
  std::vector<std::string_view> words;
  std::string_view rest = line.substr(key.size());
  while (!rest.empty()) {
    const auto start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest = rest.substr(start);
    const auto end = rest.find(' ');
    words.push_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  }
  return words;
}

}  // namespace

CallgrindTotals parse_callgrind_totals(std::string_view text, std::string_view source) {
  std::vector<std::string_view> events, totals;
  bool have_totals = false;
  CallgrindTotals result;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (line.starts_with("events:")) events = words_after(line, "events:");
    if (line.starts_with("creator:")) {
      const auto words = words_after(line, "creator:");
      if (!words.empty()) result.creator = std::string(words.front());
    }
    if (line.starts_with("totals:")) {
      totals = words_after(line, "totals:");
      have_totals = true;
    }
  }
  if (!have_totals) throw InvalidInput(fmt::format("{}: no totals line: not a finished callgrind output", source));
  EventCounts& counts = result.counts;
  const std::array<std::pair<std::string_view, std::uint64_t*>, 9> fields{{
      {"Ir", &counts.ir}, {"Dr", &counts.dr}, {"Dw", &counts.dw},
      {"I1mr", &counts.i1mr}, {"D1mr", &counts.d1mr}, {"D1mw", &counts.d1mw},
      {"ILmr", &counts.ilmr}, {"DLmr", &counts.dlmr}, {"DLmw", &counts.dlmw}}};
  for (const auto& [name, field] : fields) {
    std::size_t column = 0;
    while (column < events.size() && events[column] != name) ++column;
    if (column == events.size()) {
      throw InvalidInput(fmt::format("{}: no {} event: callgrind must run with --cache-sim=yes", source, name));
    }
    if (column >= totals.size()) continue;  // callgrind leaves out trailing zeros
    const auto word = totals[column];
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), *field);
    if (error != std::errc{} || end != word.data() + word.size()) {
      throw InvalidInput(fmt::format("{}: totals column {} is '{}', not a count", source, name, word));
    }
  }
  return result;
}

CallgrindTotals read_callgrind_totals(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InvalidInput(fmt::format("{}: cannot be read (callgrind wrote no output)", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_callgrind_totals(text.str(), file.string());
}

}  // namespace ropecheck
