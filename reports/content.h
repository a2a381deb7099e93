// What the report says, in order: the summary (verdict_section.h), verification (results table,
// kill matrix), performance (plots, the bench case table), the history link, accuracy plots, the
// baseline comparison, and machine and build. Built as a ReportDoc (doc.h) from the inputs and
// the rendered figures; writer.cc formats it.
#pragma once

#include <map>
#include <string>

#include "reports/data.h"
#include "reports/doc.h"

namespace ropecheck {

// `figures` by plot id (report_plots.h); a section whose figure is absent says why instead.
ReportDoc build_report(const ReportInputs& inputs, const std::map<std::string, Figure>& figures);

// The formats the tables use, shared with the tests that look for the input's numbers:
std::string format_ratio(double worst_ratio);        // worst/bound: 3 significant digits, "0" exact
std::string format_fraction(double limit_fraction);  // limit_fraction: 3 decimals (3 digits < 0.1)
std::string format_rate(double rate);                // GB/s or GFLOP/s: 3 significant digits, no exponent

}  // namespace ropecheck
