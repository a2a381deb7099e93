// Seed 004's decay statement (see long_range_decay.h).
#include "properties/harness/long_range_decay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/errors.h"

namespace ropecheck {

double long_range_decay_bound(int d) {
  return std::numbers::pi / 2 * std::pow(10.0, 4.0 - 8.0 / d);
}

std::vector<double> ones_score(std::span<const double> theta, std::int64_t x_max) {
  std::vector<double> score(static_cast<std::size_t>(x_max + 1));
  for (std::int64_t x = 0; x <= x_max; ++x) {
    double sum = 0;
    for (double t : theta) sum += std::cos(static_cast<double>(x) * t);
    score[static_cast<std::size_t>(x)] = 2 * sum;
  }
  return score;
}

DecayVerdict long_range_decay(std::span<const double> score, double bound) {
  DecayVerdict verdict;
  const double limit = std::min(bound, static_cast<double>(score.size()));
  for (std::size_t lo = 1; 2.0 * static_cast<double>(lo) <= limit; lo *= 2) {
    double e = 0;
    for (std::size_t x = lo; x < 2 * lo; ++x) e = std::max(e, std::abs(score[x]));
    verdict.window_max.push_back(e);
  }
  const auto& e = verdict.window_max;
  if (e.size() < 2) {
    throw InvalidInput(fmt::format("long-range decay needs two windows below the bound {:.0f}",
                                   limit));
  }
  verdict.holds = true;
  double running_max = e[0];
  for (std::size_t k = 1; k < e.size(); ++k) {
    verdict.margin = std::max(verdict.margin, e[k] / running_max);
    if (e[k] > running_max && verdict.holds) {
      verdict.holds = false;
      verdict.reason = fmt::format("(a) window [{}, {}) reaches {:.4g}, above every earlier window "
                                   "(max {:.4g})", 1ull << k, 1ull << (k + 1), e[k], running_max);
    }
    running_max = std::max(running_max, e[k]);
  }
  const double last_vs_half_first = e.back() / (e.front() / 2);
  verdict.margin = std::max(verdict.margin, last_vs_half_first);
  if (last_vs_half_first > 1 && verdict.holds) {
    verdict.holds = false;
    verdict.reason = fmt::format("(b) last window's envelope {:.4g} is more than half the first's "
                                 "({:.4g}): no decay", e.back(), e.front());
  }
  return verdict;
}

}  // namespace ropecheck
