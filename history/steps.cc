// fit_steps(), l1_step_fit() and robust_noise() (steps.h).
#include "history/steps.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>

#include "gate/student_t.h"

namespace ropecheck::history {
namespace {

// sum |x - median| of a growing multiset, in O(log n) per value: the lower half in a max-heap,
// the upper half in a min-heap, with their sums.
class RunningAbsoluteDeviation {
 public:
  void add(double x) {
    if (lower_.empty() || x <= lower_.top()) {
      lower_.push(x);
      lower_sum_ += x;
    } else {
      upper_.push(x);
      upper_sum_ += x;
    }
    if (lower_.size() > upper_.size() + 1) {
      upper_.push(lower_.top());
      upper_sum_ += lower_.top();
      lower_sum_ -= lower_.top();
      lower_.pop();
    } else if (upper_.size() > lower_.size()) {
      lower_.push(upper_.top());
      lower_sum_ += upper_.top();
      upper_sum_ -= upper_.top();
      upper_.pop();
    }
  }
  // Any point between the two middle values minimises the sum; the lower middle is one.
  double cost() const {
    const double m = lower_.top();
    return (m * static_cast<double>(lower_.size()) - lower_sum_) +
           (upper_sum_ - m * static_cast<double>(upper_.size()));
  }

 private:
  std::priority_queue<double> lower_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> upper_;
  double lower_sum_ = 0, upper_sum_ = 0;
};

// Means and the pooled within-segment sum of squares, recomputed from the runs.
struct SegmentStats {
  double squares = 0;
  std::size_t runs = 0;
};

SegmentStats update_levels(const std::vector<std::vector<double>>& log_runs, std::vector<StepSegment>& segments) {
  SegmentStats stats;
  for (auto& s : segments) {
    double sum = 0;
    s.runs = 0;
    for (std::size_t c = s.first; c <= s.last; ++c) {
      for (const double y : log_runs[c]) sum += y, ++s.runs;
    }
    s.level = sum / static_cast<double>(s.runs);
    for (std::size_t c = s.first; c <= s.last; ++c) {
      for (const double y : log_runs[c]) stats.squares += (y - s.level) * (y - s.level);
    }
    stats.runs += s.runs;
  }
  return stats;
}

struct BreakTest {
  double d = 0, se = 0, t = 0, p = 1;
};

BreakTest test_break(const StepSegment& before, const StepSegment& after, double sigma, std::size_t df) {
  BreakTest b;
  b.d = after.level - before.level;
  b.se = sigma * std::sqrt(1.0 / static_cast<double>(before.runs) + 1.0 / static_cast<double>(after.runs));
  if (b.se > 0) {
    b.t = b.d / b.se;
  } else {
    b.t = b.d == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), b.d);
  }
  b.p = 2 * (1 - student_t_cdf(std::fabs(b.t), static_cast<int>(df)));
  return b;
}

}  // namespace

double successive_difference_noise(const std::vector<std::vector<double>>& log_runs) {
  double squares = 0;
  std::size_t n = 0;
  const double* previous = nullptr;
  for (const auto& runs : log_runs) {
    for (const double& y : runs) {
      if (previous != nullptr) squares += (y - *previous) * (y - *previous), ++n;
      previous = &y;
    }
  }
  // E (x_(i+1) - x_i)^2 = 2 sigma^2 for independent noise (von Neumann); a step adds its square
  // once, which makes the estimate err on the side of fewer marks.
  return n == 0 ? 0 : std::sqrt(squares / (2 * static_cast<double>(n)));
}

double robust_noise(const std::vector<std::vector<double>>& log_runs) {
  std::vector<double> flat, differences;
  for (const auto& runs : log_runs) flat.insert(flat.end(), runs.begin(), runs.end());
  for (std::size_t i = 1; i < flat.size(); ++i) differences.push_back(std::fabs(flat[i] - flat[i - 1]));
  if (differences.empty()) return 0;
  const auto middle = differences.begin() + static_cast<std::ptrdiff_t>(differences.size() / 2);
  std::nth_element(differences.begin(), middle, differences.end());
  // For normal noise, |x_i - x_(i+1)| ~ |N(0, 2 sigma^2)|, whose median is 0.6745 sqrt(2) sigma.
  return *middle / (0.6745 * std::sqrt(2.0));
}

std::vector<StepSegment> l1_step_fit(const std::vector<std::vector<double>>& log_runs, double gamma) {
  const std::size_t n = log_runs.size();
  if (n == 0) return {};
  // best[j]: the least cost of commits 0..j-1; start[j]: where its last segment starts.
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> start(n + 1, 0);
  best[0] = 0;
  for (std::size_t i = 0; i < n; ++i) {  // a segment starting at commit i
    RunningAbsoluteDeviation segment;
    for (std::size_t j = i; j < n; ++j) {  // ... and ending at commit j
      for (const double y : log_runs[j]) segment.add(y);
      const double cost = best[i] + segment.cost() + gamma;
      if (cost < best[j + 1]) {
        best[j + 1] = cost;
        start[j + 1] = i;
      }
    }
  }
  std::vector<StepSegment> segments;
  for (std::size_t end = n; end > 0; end = start[end]) segments.push_back({start[end], end - 1, 0, 0});
  std::reverse(segments.begin(), segments.end());
  update_levels(log_runs, segments);
  return segments;
}

StepFit fit_steps(const std::vector<std::vector<double>>& log_runs, std::size_t tests,
                  const StepSettings& settings) {
  StepFit fit;
  if (log_runs.empty()) return fit;
  const double sigma0 = robust_noise(log_runs);
  fit.segments = l1_step_fit(log_runs, settings.penalty_sigmas * sigma0);
  const double level = settings.alpha / static_cast<double>(std::max<std::size_t>(tests, 1));
  const double min_step = settings.min_step_percent / 100;
  const auto kept = [&](const BreakTest& b, const StepSegment& before, const StepSegment& after) {
    return b.p < level && std::fabs(std::expm1(b.d)) >= min_step && before.runs >= settings.min_runs &&
           after.runs >= settings.min_runs;
  };
  // Levels, degrees of freedom and noise of the current segments. The segments were chosen by
  // the data, which makes their pooled sd too small on its own (a stretch of high values becomes
  // its own segment, and its spread is then small); the successive-difference estimate over all
  // runs does not depend on the segments and bounds it from below.
  const double successive = successive_difference_noise(log_runs);
  const auto measure = [&] {
    const SegmentStats stats = update_levels(log_runs, fit.segments);
    fit.df = stats.runs - fit.segments.size();
    const double pooled = fit.df > 0 ? std::sqrt(stats.squares / static_cast<double>(fit.df)) : 0;
    fit.noise = std::max(pooled, successive);
  };
  // Removes the weakest break (with no degrees of freedom left, the smallest difference; else the
  // smallest |t| of those not kept) until every break left is kept.
  const auto eliminate = [&] {
    for (measure(); fit.segments.size() > 1; measure()) {
      std::size_t weakest = fit.segments.size();
      double weakest_score = std::numeric_limits<double>::infinity();
      for (std::size_t b = 0; b + 1 < fit.segments.size(); ++b) {
        const StepSegment &before = fit.segments[b], &after = fit.segments[b + 1];
        const double score = fit.df == 0 ? std::fabs(after.level - before.level)
                                         : std::fabs(test_break(before, after, fit.noise, fit.df).t);
        const bool keep = fit.df > 0 && kept(test_break(before, after, fit.noise, fit.df), before, after);
        if (!keep && score < weakest_score) {
          weakest_score = score;
          weakest = b;
        }
      }
      if (weakest == fit.segments.size()) return;
      fit.segments[weakest].last = fit.segments[weakest + 1].last;
      fit.segments.erase(fit.segments.begin() + static_cast<std::ptrdiff_t>(weakest) + 1);
    }
  };
  // Moves each break, between its neighbours, to where the two segments' sum of squares is least
  // (the least-squares location, which uses every run where the L1 fit's medians use the middle
  // one); true when one moved.
  std::vector<double> count(log_runs.size() + 1, 0), sum(log_runs.size() + 1, 0), squares(log_runs.size() + 1, 0);
  for (std::size_t c = 0; c < log_runs.size(); ++c) {
    count[c + 1] = count[c] + static_cast<double>(log_runs[c].size());
    sum[c + 1] = sum[c];
    squares[c + 1] = squares[c];
    for (const double y : log_runs[c]) sum[c + 1] += y, squares[c + 1] += y * y;
  }
  const auto within = [&](std::size_t first, std::size_t last) {  // sum of squares of commits first..last
    const double n = count[last + 1] - count[first], s = sum[last + 1] - sum[first];
    return squares[last + 1] - squares[first] - s * s / n;
  };
  const auto refine = [&] {
    bool moved = false;
    for (std::size_t b = 0; b + 1 < fit.segments.size(); ++b) {
      StepSegment &before = fit.segments[b], &after = fit.segments[b + 1];
      std::size_t best = after.first;
      double best_squares = within(before.first, after.first - 1) + within(after.first, after.last);
      for (std::size_t at = before.first + 1; at <= after.last; ++at) {
        if (count[at] - count[before.first] < static_cast<double>(settings.min_runs) ||
            count[after.last + 1] - count[at] < static_cast<double>(settings.min_runs)) {
          continue;
        }
        const double squares_at = within(before.first, at - 1) + within(at, after.last);
        if (squares_at < best_squares - 1e-12) {
          best_squares = squares_at;
          best = at;
        }
      }
      if (best != after.first) {
        before.last = best - 1;
        after.first = best;
        moved = true;
      }
    }
    return moved;
  };
  eliminate();
  for (int pass = 0; pass < 8 && refine(); ++pass) eliminate();
  measure();
  if (fit.segments.size() < 2) return fit;
  const double q = student_t_quantile(1 - level / 2, static_cast<int>(fit.df));
  for (std::size_t b = 0; b + 1 < fit.segments.size(); ++b) {
    const BreakTest test = test_break(fit.segments[b], fit.segments[b + 1], fit.noise, fit.df);
    fit.steps.push_back({fit.segments[b + 1].first, std::expm1(test.d), std::expm1(test.d - q * test.se),
                         std::expm1(test.d + q * test.se), test.p});
  }
  return fit;
}

}  // namespace ropecheck::history
