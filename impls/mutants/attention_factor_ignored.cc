// mutant/attention_factor_ignored: YaRN's mscale (and LongRoPE's scaling) never applied to cos
// and sin, the bug of a port that copies the frequencies but not the magnitude correction: every
// pair's norm comes out a times too small (a = 0.1 ln(factor) + 1 for YaRN).
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class AttentionFactorIgnored final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/attention_factor_ignored"; }
  std::string_view summary() const override {
    return "scaled frequencies, but cos/sin not multiplied by YaRN/LongRoPE's attention factor";
  }

 protected:
  std::pair<float, float> cos_sin(const RopeSpec& spec, std::int64_t m, double theta,
                                  double) const override {
    return PairwiseMutant::cos_sin(spec, m, theta, 1.0);  // BUG: the attention factor dropped
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_attention_factor_ignored() {
  return std::make_unique<AttentionFactorIgnored>();
}

}  // namespace ropecheck
