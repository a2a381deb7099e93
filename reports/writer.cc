// render_markdown() and render_html() (report_writer.h): one walk over the blocks each, with
// escaping for the target (Markdown punctuation, HTML entities).
#include "reports/writer.h"

#include <fmt/format.h>

#include <cctype>
#include <set>
#include <sstream>

namespace ropecheck {
namespace {

std::string escape_html(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Punctuation Markdown would read as markup; underscores stay, since ids are snake_case and GFM
// never reads an intraword underscore as emphasis.
std::string escape_markdown(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\|*<>[]#").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Text with `code` spans: code is kept verbatim in Markdown and becomes <code> in HTML.
template <typename Plain, typename Code>
std::string with_code_spans(const std::string& text, Plain plain, Code code) {
  std::string out;
  bool in_code = false;
  std::size_t from = 0;
  while (from <= text.size()) {
    const auto tick = text.find('`', from);
    const auto part = text.substr(from, tick == std::string::npos ? std::string::npos : tick - from);
    out += in_code ? code(part) : plain(part);
    if (tick == std::string::npos) break;
    in_code = !in_code;
    from = tick + 1;
  }
  return out;
}

std::string md_text(const std::string& text) {
  return with_code_spans(text, escape_markdown, [](const std::string& s) { return "`" + s + "`"; });
}
std::string html_text(const std::string& text) {
  return with_code_spans(text, escape_html,
                         [](const std::string& s) { return "<code>" + escape_html(s) + "</code>"; });
}

// In a Markdown table cell a `|` ends the cell even inside code.
std::string md_cell(const std::string& text) {
  std::string out;
  for (const char c : md_text(text)) {
    if (c == '|' && (out.empty() || out.back() != '\\')) out += '\\';
    out += c;
  }
  return out;
}

void markdown_block(const Block& block, std::ostream& out) {
  if (const auto* h = std::get_if<Heading>(&block)) {
    out << std::string(static_cast<std::size_t>(h->level), '#') << ' ' << md_text(h->text) << "\n\n";
  } else if (const auto* p = std::get_if<Paragraph>(&block)) {
    out << md_text(p->text) << "\n\n";
  } else if (const auto* t = std::get_if<Table>(&block)) {
    out << '|';
    for (const auto& h : t->header) out << ' ' << md_cell(h) << " |";
    out << "\n|";
    for (std::size_t c = 0; c < t->header.size(); ++c) {
      out << (c < t->numeric.size() && t->numeric[c] ? "---:|" : "---|");
    }
    out << '\n';
    for (const auto& row : t->rows) {
      out << '|';
      for (const auto& cell : row) out << ' ' << md_cell(cell.text) << " |";
      out << '\n';
    }
    out << '\n';
  } else if (const auto* f = std::get_if<Figure>(&block)) {
    out << "![" << escape_markdown(f->title) << "](" << f->svg_path << ")\n\n"
        << '*' << md_text(f->caption) << "*\n\n";
  } else if (const auto* l = std::get_if<Link>(&block)) {
    out << '[' << escape_markdown(l->text) << "](" << l->href << ')'
        << (l->note.empty() ? "" : " " + md_text(l->note)) << "\n\n";
  }
}

constexpr const char* kCss = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328;
       max-width: 1180px; margin: 2em auto; padding: 0 1.5em; line-height: 1.45; }
h1 { border-bottom: 2px solid #d0d7de; padding-bottom: .3em; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .8em 0 1.5em; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; }
th { background: #f6f8fa; vertical-align: bottom; }
.scroll { overflow-x: auto; }
tbody tr:nth-child(even) td { background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.pass { background: #dafbe1 !important; }
td.fail, td.survived { background: #ffd8d3 !important; font-weight: 600; }
td.skip { color: #8c959f; }
td.killed { background: #ffe7b3 !important; font-weight: 600; }
code { background: #eff1f3; padding: 0 .25em; border-radius: 3px; font-size: 90%; }
figure { margin: 1.5em 0 2.5em; }
figure svg { width: 100%; height: auto; max-width: 1100px; display: block; }
figcaption { color: #57606a; font-size: 14px; margin-top: .4em; }
nav ul { display: flex; flex-wrap: wrap; gap: .2em 1.6em; list-style: none; padding: 0; margin: .6em 0; }
h2:first-of-type { margin-top: 1em; }
)";

void html_block(const Block& block, int& figure_number, std::ostream& out) {
  if (const auto* h = std::get_if<Heading>(&block)) {
    out << fmt::format("<h{0} id=\"{1}\">{2}</h{0}>\n", h->level, slug(h->text), html_text(h->text));
  } else if (const auto* p = std::get_if<Paragraph>(&block)) {
    out << "<p>" << html_text(p->text) << "</p>\n";
  } else if (const auto* t = std::get_if<Table>(&block)) {
    const auto numeric = [&](std::size_t c) { return c < t->numeric.size() && t->numeric[c]; };
    out << "<div class=\"scroll\"><table>\n<thead><tr>";
    for (std::size_t c = 0; c < t->header.size(); ++c) {
      // Property ids are long snake_case words: a break opportunity after each underscore keeps
      // a wide table's header from setting its column widths.
      std::string head = html_text(t->header[c]);
      for (auto at = head.find('_'); at != std::string::npos; at = head.find('_', at + 6)) {
        head.insert(at + 1, "<wbr>");
      }
      out << (numeric(c) ? "<th class=\"num\">" : "<th>") << head << "</th>";
    }
    out << "</tr></thead>\n<tbody>\n";
    for (const auto& row : t->rows) {
      out << "<tr>";
      for (std::size_t c = 0; c < row.size(); ++c) {
        std::string classes = numeric(c) ? "num" : "";
        if (!row[c].css.empty()) classes += (classes.empty() ? "" : " ") + row[c].css;
        out << (classes.empty() ? "<td>" : "<td class=\"" + classes + "\">") << html_text(row[c].text)
            << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody>\n</table></div>\n";
  } else if (const auto* f = std::get_if<Figure>(&block)) {
    ++figure_number;
    out << "<figure id=\"" << escape_html(f->id) << "\">\n"
        << inline_svg(f->svg, fmt::format("f{}-", figure_number)) << "\n<figcaption><b>Figure "
        << figure_number << ".</b> " << html_text(f->caption) << "</figcaption>\n</figure>\n";
  } else if (const auto* l = std::get_if<Link>(&block)) {
    out << "<p><a href=\"" << escape_html(l->href) << "\">" << html_text(l->text) << "</a>"
        << (l->note.empty() ? "" : " " + html_text(l->note)) << "</p>\n";
  }
}

}  // namespace

std::string render_markdown(const ReportDoc& doc) {
  std::ostringstream out;
  out << "# " << md_text(doc.title) << "\n\n";
  for (const auto& block : doc.blocks) markdown_block(block, out);
  return out.str();
}

std::string render_html(const ReportDoc& doc) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << escape_html(doc.title) << "</title>\n<style>" << kCss << "</style>\n"
      << "</head>\n<body>\n<h1>" << html_text(doc.title) << "</h1>\n";
  // A table of contents from the level-2 headings: the report is long.
  out << "<nav><ul>\n";
  for (const auto& block : doc.blocks) {
    if (const auto* h = std::get_if<Heading>(&block); h && h->level == 2) {
      out << "<li><a href=\"#" << slug(h->text) << "\">" << html_text(h->text) << "</a></li>\n";
    }
  }
  out << "</ul></nav>\n";
  int figure_number = 0;
  for (const auto& block : doc.blocks) html_block(block, figure_number, out);
  out << "</body>\n</html>\n";
  return out.str();
}

std::string inline_svg(const std::string& svg, const std::string& prefix) {
  // Drop everything before the <svg element (prolog, DOCTYPE, comments).
  const auto start = svg.find("<svg");
  std::string text = start == std::string::npos ? svg : svg.substr(start);
  // The root's xmlns declarations: HTML's parser supplies the SVG namespace itself, and without
  // them the document holds no URL at all (they are names, not resources, but a reader checking
  // for "http" should not have to know that).
  for (auto at = text.find(" xmlns"); at != std::string::npos && at < text.find('>');
       at = text.find(" xmlns", at)) {
    const auto open = text.find('"', at);
    const auto close = open == std::string::npos ? open : text.find('"', open + 1);
    if (close == std::string::npos || close > text.find('>')) break;
    text.erase(at, close + 1 - at);
  }
  // Collect the ids (gnuplot writes id='x' and id="x"), then prefix definitions and references.
  std::set<std::string> ids;
  for (const char quote : {'\'', '"'}) {
    const std::string open = std::string(" id=") + quote;
    for (auto at = text.find(open); at != std::string::npos; at = text.find(open, at + 1)) {
      const auto from = at + open.size();
      const auto to = text.find(quote, from);
      if (to == std::string::npos) break;
      ids.insert(text.substr(from, to - from));
    }
  }
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (std::size_t i = 0; i < text.size();) {
    // An id definition: ` id='X'` or ` id="X"`.
    if (text.compare(i, 5, " id='") == 0 || text.compare(i, 5, " id=\"") == 0) {
      out += text.substr(i, 5) + prefix;
      i += 5;
      continue;
    }
    // A reference: '#X' followed by a quote or ')' (href='#X', url(#X)).
    if (text[i] == '#') {
      std::size_t end = i + 1;
      while (end < text.size() && text[end] != '\'' && text[end] != '"' && text[end] != ')' &&
             text[end] != ' ' && text[end] != '>')
        ++end;
      if (end < text.size() && text[end] != ' ' && text[end] != '>' &&
          ids.contains(text.substr(i + 1, end - i - 1))) {
        out += '#' + prefix;
        ++i;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

std::string slug(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

}  // namespace ropecheck
