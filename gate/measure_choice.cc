// choose_measure() (measure_choice.h).
#include "gate/measure_choice.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/errors.h"
#include "gate/gate_rule.h"

namespace ropecheck {
namespace {

// Sample standard deviation of log(ratio), once every ratio is checked.
double log_spread(const std::vector<double>& ratios) {
  for (const double r : ratios) {
    if (!(std::isfinite(r) && r > 0)) {
      throw InvalidInput(fmt::format("gate: pilot ratio {} is not finite and positive", r));
    }
  }
  return log_ratio_spread(ratios);
}

}  // namespace

std::string_view to_string(MeasureRule rule) {
  switch (rule) {
    case MeasureRule::automatic: return "auto";
    case MeasureRule::limit: return "limit";
    case MeasureRule::time: return "time";
  }
  return "?";
}

MeasureChoice choose_measure(const std::vector<double>& time_ratios,
                             const std::vector<double>& limit_ratios) {
  if (time_ratios.size() < kMinPilotRounds) {
    throw InvalidInput(fmt::format("gate: {} pilot round(s); choosing a measure needs >= {}",
                                   time_ratios.size(), kMinPilotRounds));
  }
  if (!limit_ratios.empty() && limit_ratios.size() != time_ratios.size()) {
    throw InvalidInput(fmt::format("gate: {} limit ratios for {} pilot rounds", limit_ratios.size(),
                                   time_ratios.size()));
  }
  MeasureChoice choice;
  choice.time_spread = log_spread(time_ratios);
  choice.limit_spread = limit_ratios.empty() ? std::numeric_limits<double>::quiet_NaN()
                                             : log_spread(limit_ratios);
  choice.measure = choice.limit_spread <= choice.time_spread ? GateMeasure::limit : GateMeasure::time;
  return choice;
}

}  // namespace ropecheck
