// median() and bootstrap_median_ratio() (report_stats.h).
#include "reports/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace ropecheck {
namespace {

// The percentile by linear interpolation between order statistics (numpy's default), on a
// sorted vector.
double percentile(const std::vector<double>& sorted, double p) {
  const double at = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const auto above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

double median(std::span<const double> samples) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

RatioInterval bootstrap_median_ratio(std::span<const double> current, std::span<const double> baseline,
                                     int resamples, std::uint64_t seed) {
  RatioInterval r;
  r.ratio = median(current) / median(baseline);
  // mt19937_64 is specified bit for bit by the standard; uniform_int_distribution is not, so the
  // index is drawn by modulo (its bias, below 1e-17 for a handful of samples, is irrelevant).
  std::mt19937_64 rng(seed);
  const auto resample = [&](std::span<const double> from, std::vector<double>& into) {
    for (double& x : into) x = from[rng() % from.size()];
    return median(into);
  };
  std::vector<double> c(current.size()), b(baseline.size()), ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double num = resample(current, c);
    ratios.push_back(num / resample(baseline, b));
  }
  std::sort(ratios.begin(), ratios.end());
  r.low = percentile(ratios, 0.025);
  r.high = percentile(ratios, 0.975);
  return r;
}

}  // namespace ropecheck
