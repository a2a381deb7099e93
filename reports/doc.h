// The report as a list of blocks (headings, paragraphs, tables, figures, links) that writer.cc
// renders twice, as Markdown and as HTML: one model, so the two files cannot say different things.
// In paragraph and cell text, `backticks` mark code; everything else is plain text.
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace ropecheck {

struct Heading {
  int level = 2;  // 1..3
  std::string text;
};

struct Paragraph {
  std::string text;
};

struct TableCell {
  std::string text;
  std::string css;  // HTML class ("pass", "fail", "skip", "killed", "survived"); empty: none
};

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<TableCell>> rows;
};

struct Figure {
  std::string id;       // the plot's name: plots/<id>.svg
  std::string title;
  std::string caption;  // one line: what to look at
  std::string svg_path;  // relative to the report's directory, "plots/<id>.svg"
  std::string svg;       // the SVG file's text, inlined into the HTML
};

// A link to a page beside the report (the history page), by a relative path: the report stays
// a file that opens offline.
struct Link {
  std::string text;
  std::string href;  // relative to the report's directory
  std::string note;  // text after the link, `code` spans as in a paragraph; may be empty
};

using Block = std::variant<Heading, Paragraph, Table, Figure, Link>;

struct ReportDoc {
  std::string title;
  std::vector<Block> blocks;
};

}  // namespace ropecheck
