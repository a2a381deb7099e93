// Seed 000 on the whole multi-head layer (seed 003: projections, heads, W_o), on every attention
// implementation: without positions, reordering the tokens reorders the outputs within the fp32
// bound (of K and V kept as the implementation keeps them); with sinusoidal, learned or rotary
// positions the outputs change beyond it.
//   ropecheck verify --property mha_positions_break_equivariance
#include <fmt/format.h>

#include <array>
#include <utility>

#include "properties/catalogue.h"
#include "properties/harness/multi_head_cases.h"
#include "properties/harness/rapidcheck_bridge.h"

namespace ropecheck {
namespace {

PropertyResult positions_break_equivariance(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const StorageType kv = subject.attention->kv_storage();
  const std::string units = kv == StorageType::fp32 ? "fp32 bound" : fmt::format("{} K,V bound", to_string(kv));
  return check_property(subject, config, units, tracker, [&] {
    const MultiHeadCase c = pick_multi_head_case(false, kMinReorderTokens);
    const auto order = pick_reordering(c.tokens);
    const auto blind = reorder_gap(*subject.attention, c, PositionalKind::none, false, order);
    tracker.observe(blind.diff, blind.bound);
    if (!(blind.worst_ratio <= 1)) {
      RC_FAIL(fmt::format("without positions, reordering the tokens changed {} by {:.3g} > bound "
                          "{:.3g}", blind.where, blind.diff, blind.bound));
    }
    // Beyond the sum of both runs' bounds, the exact outputs differ: the positions reached
    // attention. Observed as bound / difference, so that <= 1 passes.
    const std::array<std::pair<const char*, std::pair<PositionalKind, bool>>, 3> encodings = {{
        {"sinusoidal", {PositionalKind::absolute, false}},
        {"learned", {PositionalKind::absolute, true}},
        {"rotary", {PositionalKind::rotary, false}},
    }};
    for (const auto& [name, encoding] : encodings) {
      const auto gap = reorder_gap(*subject.attention, c, encoding.first, encoding.second, order);
      tracker.observe(gap.bound, gap.diff);
      if (!(gap.worst_ratio > 1)) {
        RC_FAIL(fmt::format("with {} positions, reordering the tokens only reordered the outputs: "
                            "largest change {:.3g} at {}, within the rounding bound {:.3g} (the "
                            "positions never reached attention)", name, gap.diff, gap.where,
                            gap.bound));
      }
    }
  });
}

}  // namespace

std::span<const Property> multi_head_properties() {
  static const Property kAll[] = {
      {"mha_positions_break_equivariance",
       "multi-head layer: reordering tokens reorders outputs without positions, changes them with "
       "sinusoidal, learned or rotary positions (seeds 000, 003)",
       SubjectKind::attention, positions_break_equivariance},
  };
  return kAll;
}

}  // namespace ropecheck
