// mutant/frequencies_from_head_dim: partial rotary with the exponent taken from head_dim,
// theta_i = base^(-2i / head_dim) for the first rotary_dim/2 pairs, where HF (and the spec) use
// rotary_dim: GPT-NeoX-style models (rotary_pct 0.25) ported with the full-rotary formula.
// Scaling follows the same wrong dimension (NTK's d/(d-2), YaRN's correction dims).
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class FrequenciesFromHeadDim final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/frequencies_from_head_dim"; }
  std::string_view summary() const override {
    return "partial rotary: theta_i = base^(-2i/head_dim) instead of base^(-2i/rotary_dim)";
  }

 protected:
  std::vector<double> frequencies(const RopeSpec& spec) const override {
    RopeSpec whole = spec;
    whole.rotary_dim = spec.head_dim;  // BUG
    if (spec.scaling.kind == ScalingKind::longrope) {  // the arrays must cover head_dim/2 pairs
      whole.scaling.short_factor.resize(static_cast<std::size_t>(spec.head_dim / 2), 1.0);
      whole.scaling.long_factor.resize(static_cast<std::size_t>(spec.head_dim / 2), 1.0);
    }
    auto theta = inverse_frequencies(whole);
    theta.resize(static_cast<std::size_t>(spec.rotary_dim / 2));
    return theta;
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_frequencies_from_head_dim() {
  return std::make_unique<FrequenciesFromHeadDim>();
}

}  // namespace ropecheck
