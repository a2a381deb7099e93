// Seed 004's long-range decay, measured through an implementation: the ones-vector score
// score(x) = <R_0 1, R_x 1> = sum_j (R_x 1)_j for x = 0 .. 2^13 - 1, then the statement of
// long_range_decay.h. Deterministic (one case): it holds for d = 64, 128, 256 (base 10000,
// windows up to [4096, 8192) all below the bound) and must fail for the seed's d = 4.
#include <fmt/format.h>

#include <numeric>

#include "properties/harness/long_range_decay.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_harness.h"
#include "properties/catalogue.h"

namespace ropecheck {
namespace {

std::vector<double> ones_score_through(const RopeImpl& impl, RopeSpec spec, std::int64_t x_max) {
  std::vector<std::int64_t> positions(static_cast<std::size_t>(x_max + 1));
  std::iota(positions.begin(), positions.end(), 0);
  const std::vector<float> ones(positions.size() * static_cast<std::size_t>(spec.head_dim), 1.0f);
  const auto k = rotated(impl, spec, ones, 1, positions);
  std::vector<double> score(positions.size());
  const auto d = static_cast<std::size_t>(spec.head_dim);
  for (std::size_t x = 0; x < positions.size(); ++x) {
    score[x] = std::accumulate(k.begin() + static_cast<std::ptrdiff_t>(x * d),
                               k.begin() + static_cast<std::ptrdiff_t>((x + 1) * d), 0.0);
  }
  return score;
}

}  // namespace

PropertyResult long_range_decay_property(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const RopeImpl& impl = *subject.rope;
  const auto caps = impl.capabilities();
  if (caps.max_head_dim < 256) {  // the statement is about d = 64, 128 and 256
    return skipped_result(subject, config,
                          fmt::format("needs head_dim 256, maximum is {}", caps.max_head_dim));
  }
  RunConfig once = config;
  once.cases = 1;  // nothing random: the curve is a fixed function of d
  return check_property(subject, once, "envelope ratio", tracker, [&] {
    RopeSpec spec;
    spec.layout = caps.layouts.front();
    spec.angle_precision = caps.angle_precisions.back();
    constexpr std::int64_t kXMax = (1 << 13) - 1;  // windows up to [4096, 8192): below every bound
    for (int d : {64, 128, 256}) {
      spec.head_dim = spec.rotary_dim = d;
      const auto verdict = long_range_decay(ones_score_through(impl, spec, kXMax),
                                            long_range_decay_bound(d));
      tracker.observe(verdict.margin, 1.0);
      if (!verdict.holds) RC_FAIL(fmt::format("d = {}: decay should hold but {}", d, verdict.reason));
    }
    spec.head_dim = spec.rotary_dim = 4;
    const double bound4 = long_range_decay_bound(4);
    const auto verdict = long_range_decay(
        ones_score_through(impl, spec, static_cast<std::int64_t>(bound4)), bound4);
    if (verdict.holds) {
      RC_FAIL(fmt::format("d = 4: the seed's counter-example (periodic, period ~628) shows decay "
                          "(margin {:.3g}): the statement has no teeth here", verdict.margin));
    }
  });
}

// This family's properties, in catalogue order (catalogue.cc lists the families).
std::span<const Property> long_range_decay_properties() {
  static const Property kAll[] = {
      {"long_range_decay",
       "ones-vector score envelope decays below (pi/2)10^(4-8/d) for d=64,128,256 and not for d=4 "
       "(seed 004)",
       SubjectKind::rope, long_range_decay_property},
  };
  return kAll;
}

}  // namespace ropecheck
