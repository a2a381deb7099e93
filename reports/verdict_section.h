// The report's first section: the verdict summary (verdict.h) as one compact table, so that the
// first screen of report.html (1280 x 800) holds the verdict and the performance summary.
#pragma once

#include "reports/data.h"
#include "reports/doc.h"
#include "reports/verdict.h"

namespace ropecheck {

// Appends the "Summary" heading and its table (and a line on the history page, when linked).
void verdict_section(ReportDoc& doc, const VerdictSummary& summary, const ReportHistoryLink& history);

}  // namespace ropecheck
