// Where a case got slower or faster over the commits of one line, and by how much.
//
// Two stages, each chosen for what the other cannot do (history/README.md, "Finding steps"):
//  1. Candidates: a penalised L1 step fit, as airspeed velocity does: the piecewise-constant
//     levels that minimise sum |y - level of its segment| + penalty x (segments - 1) over the
//     runs in commit order (y = log of the measure, breaks only between commits), by dynamic
//     programming. Absolute deviations let a single slow process (bench/README.md: 1.4-1.7x on
//     a shared machine) move no level, and one pass finds several steps and recoveries. The
//     penalty is 2 sigma, sigma the run-to-run noise estimated robustly from successive
//     differences: generous, since stage 2 decides.
//  2. Confirmation, with the statistics of the gate: every process is one sample (repetitions
//     inside a process agree too well to be samples). Per break, the difference of the mean
//     log measure of the segments either side, a t test (df = runs - segments) against the
//     noise: the larger of the sd pooled within the segments and the successive-difference
//     estimate over all runs (the segments were chosen by the data, which makes the pooled sd
//     alone too small). Two-sided at alpha / m, where m counts every commit boundary of every
//     line of the page (Bonferroni: measured, 1-5% of pages of pure noise get a mark at alpha
//     5%). A break is kept when it is significant, at least min_step in size, and has at least
//     two runs on each side; the weakest other break is removed, its segments merged, the rest
//     tested again, and every break kept is moved to its least-squares place between its
//     neighbours (which uses every run where the L1 fit's medians use the middle one), until
//     nothing changes.
// A step at the newest commit is marked once that commit has enough runs (a single run there
// cannot be told from one slow process): the gate's reason for several processes per side.
#pragma once

#include <cstddef>
#include <vector>

namespace ropecheck::history {

struct StepSettings {
  double alpha = 0.05;            // the chance of any false mark on a page, in (0, 1)
  double min_step_percent = 5;    // smaller changes are not marked (the gate's threshold)
  double penalty_sigmas = 2;      // stage 1's penalty per break, in units of the robust noise
  // Runs a level needs on each side of a break: one process alone is no evidence (a single
  // process can run 1.4-1.7x slow for reasons of its own, bench/README.md).
  std::size_t min_runs = 2;
  // Counted lines (counted_steps.h): a change between consecutive commits larger than this is a
  // step; counts of one build agree across processes to far below 0.1%.
  double min_counted_step_percent = 1;
};

struct StepSegment {
  std::size_t first = 0, last = 0;  // commit indices within the series, inclusive
  std::size_t runs = 0;
  double level = 0;  // mean of the log measure over its runs
};

struct Step {
  std::size_t at = 0;        // index within the series of the first commit after the step
  double change = 0;         // exp(level after - level before) - 1: -0.1 is 10% lower
  double low = 0, high = 0;  // its interval at the level tested (1 - alpha/m, two-sided)
  double p = 1;              // two-sided, before the Bonferroni factor
};

struct StepFit {
  std::vector<StepSegment> segments;  // the levels kept (one when no step)
  std::vector<Step> steps;            // one per break between segments
  double noise = 0;                   // the noise tested against (sd of the log measure per run)
  std::size_t df = 0;
};

// `log_runs[c]`: the log measure of each run at the series' c-th commit (each commit at least one
// run). `tests` is m above: the number of commit boundaries tested on the page (>= 1).
StepFit fit_steps(const std::vector<std::vector<double>>& log_runs, std::size_t tests,
                  const StepSettings& settings);

// Stage 1 alone, for the tests: the segments of the penalised L1 fit with penalty `gamma`.
std::vector<StepSegment> l1_step_fit(const std::vector<std::vector<double>>& log_runs, double gamma);

// The run-to-run noise from the squared successive differences over the runs in order (von
// Neumann): sqrt(sum (y_(i+1) - y_i)^2 / (2 (n - 1))). Does not depend on where the breaks are.
double successive_difference_noise(const std::vector<std::vector<double>>& log_runs);

// The run-to-run noise, robustly: median |successive difference| / (0.6745 sqrt 2) over the runs
// in order (a step is one large difference among many and moves the median little).
double robust_noise(const std::vector<std::vector<double>>& log_runs);

}  // namespace ropecheck::history
