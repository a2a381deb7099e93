// compare_benches(): per case, medians, a one-sided Mann-Whitney U test in each direction,
// Holm's adjustment over the gated cases, and the verdict. See bench_compare.h.
//
// Why Holm and not Bonferroni: both bound the chance of any false REGRESSION over the m gated
// cases by alpha, under any dependence between cases (they share a machine and a run, so they are
// dependent); Holm rejects everything Bonferroni rejects and more, so a real regression in one of
// many cases is missed less often. Only the regression direction fails the gate; the improvement
// direction is adjusted the same way, as its own family, for a symmetric report.
#include "gate/compare_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "gate/mann_whitney.h"
#include "core/errors.h"

namespace ropecheck {
namespace {

// 1/real_time as runs per second: higher is better, like limit_fraction.
std::vector<double> runs_per_second(const std::vector<double>& real_time_ns) {
  std::vector<double> rate;
  for (const double t : real_time_ns) rate.push_back(1e9 / t);
  return rate;
}

// The smallest one-sided p any outcome can give: one arrangement of C(n1 + n2, n1) (no ties).
// Each partial product is itself a binomial coefficient, so it stays exact up to 2^53.
double smallest_p(std::size_t n1, std::size_t n2) {
  double arrangements = 1;
  for (std::size_t i = 1; i <= n1; ++i) {
    arrangements = arrangements * static_cast<double>(n2 + i) / static_cast<double>(i);
  }
  return 1 / arrangements;
}

void check_settings(const CompareSettings& s) {
  if (!std::isfinite(s.threshold_percent) || s.threshold_percent < 0 ||
      s.threshold_percent >= 100) {
    throw InvalidInput(fmt::format("--threshold: {} is not a percentage in [0, 100)",
                                   s.threshold_percent));
  }
  if (!(s.alpha > 0 && s.alpha < 1)) {
    throw InvalidInput(fmt::format("--alpha: {} is not in (0, 1)", s.alpha));
  }
}

CaseComparison measure(const BenchCase& base, const BenchCase& current) {
  CaseComparison c;
  c.name = base.name;
  c.absolute = base.limit_fraction.empty() || current.limit_fraction.empty();
  const auto base_samples = c.absolute ? runs_per_second(base.real_time_ns) : base.limit_fraction;
  const auto current_samples =
      c.absolute ? runs_per_second(current.real_time_ns) : current.limit_fraction;
  c.base_n = base_samples.size();
  c.current_n = current_samples.size();
  c.base_median = median(base_samples);
  c.current_median = median(current_samples);
  c.change = c.current_median / c.base_median - 1;
  if (!base.is_probe()) {
    const auto lower = mann_whitney_u(current_samples, base_samples, Alternative::less);
    const auto higher = mann_whitney_u(current_samples, base_samples, Alternative::greater);
    c.u = lower.u;
    c.exact = lower.exact;
    c.p_lower = lower.p;
    c.p_higher = higher.p;
  }
  return c;
}

Verdict decide(const CaseComparison& c, const CompareSettings& s) {
  const double threshold = s.threshold_percent / 100;
  if (c.change < -threshold && c.p_lower_adjusted < s.alpha) return Verdict::regression;
  if (c.change > threshold && c.p_higher_adjusted < s.alpha) return Verdict::faster;
  if (std::abs(c.change) <= threshold) return Verdict::ok;
  return Verdict::not_significant;
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok: return "ok";
    case Verdict::regression: return "REGRESSION";
    case Verdict::faster: return "faster";
    case Verdict::not_significant: return "not significant";
    case Verdict::not_gated: return "not gated";
    case Verdict::only_in_base: return "only in base";
    case Verdict::only_in_current: return "only in current";
  }
  return "?";
}

double median(std::vector<double> sample) {
  if (sample.empty()) throw std::invalid_argument("median of an empty sample");
  const std::size_t mid = sample.size() / 2;
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(mid), sample.end());
  const double upper = sample[mid];
  if (sample.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

Comparison compare_benches(const std::map<std::string, BenchCase>& base,
                           const std::map<std::string, BenchCase>& current,
                           const CompareSettings& settings) {
  check_settings(settings);
  Comparison result;
  std::vector<std::size_t> gated;  // indices into result.cases
  std::vector<CaseComparison> only;
  for (const auto& [name, b] : base) {
    const auto cur = current.find(name);
    if (cur == current.end()) {
      only.push_back({.name = name, .verdict = Verdict::only_in_base, .base_n = b.repetitions()});
      continue;
    }
    result.cases.push_back(measure(b, cur->second));
    if (b.is_probe()) {
      result.cases.back().verdict = Verdict::not_gated;
    } else {
      gated.push_back(result.cases.size() - 1);
    }
  }
  for (const auto& [name, c] : current) {
    if (!base.contains(name)) {
      only.push_back(
          {.name = name, .verdict = Verdict::only_in_current, .current_n = c.repetitions()});
    }
  }
  if (gated.empty()) {
    throw InvalidInput(fmt::format(
        "no case to compare: base and current share no benchmark (probes aside; {} in base, {} "
        "in current) - were they run with the same --benchmark_filter?",
        base.size(), current.size()));
  }
  result.gated = gated.size();

  std::vector<double> p_lower, p_higher;
  for (const std::size_t i : gated) {
    p_lower.push_back(result.cases[i].p_lower);
    p_higher.push_back(result.cases[i].p_higher);
  }
  const auto lower_adjusted = holm_adjust(p_lower), higher_adjusted = holm_adjust(p_higher);
  std::set<std::pair<std::size_t, std::size_t>> powerless;  // (n_base, n_current) warned about
  for (std::size_t k = 0; k < gated.size(); ++k) {
    auto& c = result.cases[gated[k]];
    c.p_lower_adjusted = lower_adjusted[k];
    c.p_higher_adjusted = higher_adjusted[k];
    c.p_adjusted = c.change < 0 ? c.p_lower_adjusted : c.p_higher_adjusted;
    c.verdict = decide(c, settings);
    // Holm's first step compares the smallest p with alpha / m: below that no case can fail.
    const double floor = smallest_p(c.base_n, c.current_n) * static_cast<double>(result.gated);
    if (floor >= settings.alpha && powerless.emplace(c.base_n, c.current_n).second) {
      result.warnings.push_back(fmt::format(
          "with {} base and {} current repetitions over {} gated case(s) the smallest adjusted p "
          "is {:.3g} >= alpha {}: no REGRESSION can be detected; use more repetitions",
          c.base_n, c.current_n, result.gated, std::min(1.0, floor), settings.alpha));
    }
  }
  for (auto& c : only) result.cases.push_back(std::move(c));
  for (const auto& c : result.cases) ++result.counts[c.verdict];
  return result;
}

}  // namespace ropecheck
