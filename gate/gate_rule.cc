// judge_rounds(): the paired (trimmed) t interval on log ratios; Holm's adjustment on the
// regression side (gate_rule.h).
//
// Why a t interval and not a bootstrap: the sample is K per-process ratios, K ~ 10. A percentile
// bootstrap of 10 values has no tails beyond the largest value seen and covers well below its
// nominal level at that size; the t interval on log ratios is exact for normal log ratios and
// robust to mild skew, and its verdicts can be checked against tables. Logs make the statistic
// symmetric (1.1 and 1/1.1 are the same size of change) and the mean a geometric mean.
#include "gate/gate_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "gate/mann_whitney.h"
#include "gate/student_t.h"

namespace ropecheck {
namespace {

// The power the "detectable" column is quoted at.
constexpr double kDetectionPower = 0.80;

void check(const std::vector<CaseRounds>& cases, const GateSettings& s) {
  if (!(s.threshold_percent > 0 && s.threshold_percent < 100)) {
    throw InvalidInput(fmt::format("--threshold: {} is not a percentage in (0, 100)",
                                   s.threshold_percent));
  }
  if (!(s.alpha > 0 && s.alpha < 1)) {
    throw InvalidInput(fmt::format("--alpha: {} is not in (0, 1)", s.alpha));
  }
  if (!(s.trim >= 0 && s.trim <= kMaxTrim)) {
    throw InvalidInput(fmt::format("--trim: {} is not in [0, {}]", s.trim, kMaxTrim));
  }
  for (const auto& c : cases) {
    if (c.ratios.size() < kMinRounds) {
      throw InvalidInput(fmt::format("case '{}': {} round(s), the gate needs at least {}", c.name,
                                     c.ratios.size(), kMinRounds));
    }
    for (const double r : c.ratios) {
      if (!(std::isfinite(r) && r > 0)) {
        throw InvalidInput(fmt::format("case '{}': ratio {} is not finite and positive", c.name, r));
      }
    }
  }
  if (std::none_of(cases.begin(), cases.end(), [](const auto& c) { return c.flagged.empty(); })) {
    throw InvalidInput("no case to gate: every case is flagged or none was measured");
  }
}

struct LogMoments {
  double mean = 0, sd = 0, se = 0;  // sd: winsorized when trimmed
  int df = 0;
};

std::size_t kept_rounds(std::size_t n, double trim) {
  return n - 2 * static_cast<std::size_t>(std::floor(trim * static_cast<double>(n)));
}

// Yuen's trimmed mean of the log ratios: sorted, g = floor(trim n) dropped from each end, h = n - 2g
// kept; mean = the mean of the kept, sd = the sd of the winsorized sample (each dropped value
// replaced by the nearest kept one), se = sd sqrt(n) / h, df = h - 1. With trim 0 this is the
// plain paired t: mean, s / sqrt(n), n - 1.
LogMoments log_moments(const std::vector<double>& ratios, double trim) {
  std::vector<double> y;
  for (const double r : ratios) y.push_back(std::log(r));
  std::sort(y.begin(), y.end());
  const std::size_t n = y.size(), h = kept_rounds(n, trim), g = (n - h) / 2;
  LogMoments m;
  for (std::size_t i = g; i < n - g; ++i) m.mean += y[i] / static_cast<double>(h);
  double winsorized_mean = 0;
  for (double& v : y) {
    v = std::clamp(v, y[g], y[n - g - 1]);
    winsorized_mean += v / static_cast<double>(n);
  }
  double squares = 0;
  for (const double v : y) squares += (v - winsorized_mean) * (v - winsorized_mean);
  m.sd = std::sqrt(squares / static_cast<double>(n - 1));
  m.se = m.sd * std::sqrt(static_cast<double>(n)) / static_cast<double>(h);
  m.df = static_cast<int>(h) - 1;
  return m;
}

// The one-sided bound of the mean at `level` on the side `sign` (-1 lower, +1 upper).
double bound(const LogMoments& m, double level, int sign) {
  if (m.se == 0) return m.mean;
  return m.mean + sign * student_t_quantile(1 - level, m.df) * m.se;
}

// The level at which Holm tested a case: alpha * p / p_adjusted (see gate_rule.h); alpha / m
// when p is 0 (a zero-noise sample, whose interval is a point anyway).
double holm_level(double alpha, double p, double p_adjusted, std::size_t m) {
  return p > 0 ? alpha * p / p_adjusted : alpha / static_cast<double>(m);
}

}  // namespace

std::string_view to_string(GateVerdict verdict) {
  switch (verdict) {
    case GateVerdict::pass: return "PASS";
    case GateVerdict::regression: return "REGRESSION";
    case GateVerdict::inconclusive: return "INCONCLUSIVE";
    case GateVerdict::flagged: return "flagged";
  }
  return "?";
}

std::optional<std::size_t> rounds_to_resolve(double distance, double sd, double level,
                                             std::size_t from, double trim) {
  if (!(distance > 0)) return std::nullopt;
  for (std::size_t n = std::max(from, kMinRounds); n <= kMaxRoundsAdvised; ++n) {
    const std::size_t h = kept_rounds(n, trim);
    const double half_width = student_t_quantile(1 - level, static_cast<int>(h) - 1) * sd *
                              std::sqrt(static_cast<double>(n)) / static_cast<double>(h);
    if (half_width < distance) return n;
  }
  return std::nullopt;
}

GateJudgement judge_rounds(const std::vector<CaseRounds>& cases, const GateSettings& settings) {
  check(cases, settings);
  const double limit = std::log1p(settings.threshold_percent / 100);
  GateJudgement judgement;
  std::vector<LogMoments> moments;
  std::vector<double> p_regression;  // of the gated cases, in order
  for (const auto& c : cases) {
    const LogMoments m = log_moments(c.ratios, settings.trim);
    moments.push_back(m);
    CaseVerdict v;
    v.name = c.name;
    v.flagged = c.flagged;
    v.rounds = c.ratios.size();
    v.ratio = std::exp(m.mean);
    v.noise_percent = 100 * coefficient_of_variation(c.ratios);
    if (m.se == 0) {
      v.p_regression = m.mean > limit ? 0 : 1;
      v.p_pass = m.mean < limit ? 0 : 1;
    } else {
      const double t = (m.mean - limit) / m.se;
      v.p_regression = 1 - student_t_cdf(t, m.df);
      v.p_pass = student_t_cdf(t, m.df);
    }
    if (c.flagged.empty()) {
      ++judgement.gated;
      p_regression.push_back(v.p_regression);
    }
    judgement.cases.push_back(std::move(v));
  }
  const auto regression_adjusted = holm_adjust(p_regression);
  const std::size_t m_gated = judgement.gated;
  const double bonferroni = settings.alpha / static_cast<double>(m_gated);
  std::size_t k = 0;
  for (std::size_t i = 0; i < judgement.cases.size(); ++i) {
    CaseVerdict& v = judgement.cases[i];
    const LogMoments& m = moments[i];
    double level_low = bonferroni;
    const double level_high = settings.alpha;  // the pass side needs no adjustment (gate_rule.h)
    if (v.flagged.empty()) {
      v.p_regression_adjusted = regression_adjusted[k];
      ++k;
      level_low = holm_level(settings.alpha, v.p_regression, v.p_regression_adjusted, m_gated);
      v.verdict = v.p_regression_adjusted < settings.alpha ? GateVerdict::regression
                  : v.p_pass < settings.alpha              ? GateVerdict::pass
                                                           : GateVerdict::inconclusive;
    } else {
      v.verdict = GateVerdict::flagged;
    }
    v.ratio_low = std::exp(bound(m, level_low, -1));
    v.ratio_high = std::exp(bound(m, level_high, +1));
    const double q_regression = student_t_quantile(1 - bonferroni, m.df);
    v.detectable_percent =
        100 * std::expm1(limit + (q_regression + student_t_quantile(kDetectionPower, m.df)) * m.se);
    if (v.verdict == GateVerdict::inconclusive) {
      // Below the threshold the case heads for PASS (tested at alpha), above it for REGRESSION
      // (tested at alpha / m at worst).
      const double resolve_level = m.mean < limit ? settings.alpha : bonferroni;
      v.rounds_needed =
          rounds_to_resolve(std::abs(m.mean - limit), m.sd, resolve_level, v.rounds + 1, settings.trim);
      v.threshold_to_pass_percent =
          100 * std::expm1(m.mean + student_t_quantile(1 - settings.alpha, m.df) * m.se);
    }
    switch (v.verdict) {
      case GateVerdict::regression: ++judgement.regressions; break;
      case GateVerdict::inconclusive: ++judgement.inconclusive; break;
      case GateVerdict::pass: ++judgement.passed; break;
      case GateVerdict::flagged: break;
    }
  }
  judgement.exit_code = judgement.regressions > 0    ? kExitFailed
                        : judgement.inconclusive > 0 ? kExitInconclusive
                                                     : kExitOk;
  return judgement;
}

double coefficient_of_variation(const std::vector<double>& x) {
  const auto n = static_cast<double>(x.size());
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double squares = 0;
  for (const double v : x) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / (n - 1)) / mean;
}

double log_ratio_spread(const std::vector<double>& ratios) { return log_moments(ratios, 0).sd; }

}  // namespace ropecheck
