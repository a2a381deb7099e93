// fit_counted_steps() (counted_steps.h).
#include "history/counted_steps.h"

#include <algorithm>
#include <cmath>

namespace ropecheck::history {
namespace {

double median_log(std::vector<double> runs) {
  std::sort(runs.begin(), runs.end());
  const std::size_t n = runs.size();
  return n % 2 ? runs[n / 2] : (runs[n / 2 - 1] + runs[n / 2]) / 2;
}

}  // namespace

StepFit fit_counted_steps(const std::vector<std::vector<double>>& log_runs, double min_step) {
  StepFit fit;
  if (log_runs.empty()) return fit;
  std::vector<double> values;
  for (const auto& runs : log_runs) {
    values.push_back(median_log(runs));
    const auto [low, high] = std::minmax_element(runs.begin(), runs.end());
    fit.noise = std::max(fit.noise, *high - *low);
  }
  fit.segments.push_back({0, 0, 0, 0});
  for (std::size_t c = 1; c < values.size(); ++c) {
    const double change = std::expm1(values[c] - values[c - 1]);
    if (std::fabs(change) > min_step) {
      fit.steps.push_back({c, change, change, change, 0});
      fit.segments.push_back({c, c, 0, 0});
    }
    fit.segments.back().last = c;
  }
  // A level: the mean log measure of its runs, as the timed fit's.
  for (auto& s : fit.segments) {
    double sum = 0;
    for (std::size_t c = s.first; c <= s.last; ++c) {
      for (const double y : log_runs[c]) sum += y, ++s.runs;
    }
    s.level = sum / static_cast<double>(s.runs);
  }
  return fit;
}

}  // namespace ropecheck::history
