// Steps on a counted line (history/README.md, "Counted lines"). Counts repeat exactly from
// process to process of one build (the simulated caches are fixed, nothing is timed), so a change
// between two commits is the code's, exactly: no noise to test it against, and one run each side
// is enough. A step is marked between consecutive commits whose values (each the median of its
// runs, normally all equal) differ by more than `min_step`; the levels are the stretches between
// steps. A drift of many changes each below `min_step` is drawn, not marked.
#pragma once

#include <vector>

#include "history/steps.h"

namespace ropecheck::history {

// `log_runs[c]`: the log measure of each run at the series' c-th commit (each at least one).
// `min_step`: relative, e.g. 0.01. Each step's interval is the change itself (low = high); its p
// is 0; `noise` is the largest spread (log) between runs of one commit, 0 for exact repeats.
StepFit fit_counted_steps(const std::vector<std::vector<double>>& log_runs, double min_step);

}  // namespace ropecheck::history
