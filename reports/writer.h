// Renders a ReportDoc (report_doc.h) as report.md (figures referenced by relative path) and as a
// self-contained report.html (inline CSS, every SVG inlined, no network resource at all).
#pragma once

#include <string>

#include "reports/doc.h"

namespace ropecheck {

std::string render_markdown(const ReportDoc& doc);
std::string render_html(const ReportDoc& doc);

// An SVG file's text made fit for inlining in HTML: the XML prolog and DOCTYPE dropped, and every
// id (and each reference to it) prefixed with `prefix`, because gnuplot gives every file the same
// ids (gpPt0, gnuplot_canvas, ...) and one document must not hold an id twice.
std::string inline_svg(const std::string& svg, const std::string& prefix);

// Lower case letters and digits of `text`, '-' between words, none at either end: heading anchors
// (and the history's machine ids).
std::string slug(const std::string& text);

}  // namespace ropecheck
