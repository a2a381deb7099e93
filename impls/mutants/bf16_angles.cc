// mutant/bf16_angles: the angle table built in bf16, the dtype of a model run in bf16 (HF before
// it forced fp32 there, and every port that builds its cos/sin cache in the activation dtype):
// freqs = (position.bf16() * inv_freq.bf16()).bf16(). 8 significant bits: position 4095 itself
// rounds to 4096, so pair 0's angle is a whole radian off and cos/sin are wrong in their first
// digit, where the fp32 angle bound allows about 2^-21 radian.
#include <cmath>
#include <memory>

#include "impls/mutants/pairwise_mutant.h"
#include "core/storage.h"

namespace ropecheck {
namespace {

float to_bf16(float x) { return float_from_bf16(bf16_from_float(x)); }

class Bf16Angles final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/bf16_angles"; }
  std::string_view summary() const override {
    return "forms m, theta and m*theta in bf16 (8-bit significand), a bf16 model's cos/sin cache";
  }

 protected:
  std::pair<float, float> cos_sin(const RopeSpec&, std::int64_t m, double theta,
                                  double scale) const override {
    const float angle =
        to_bf16(to_bf16(static_cast<float>(m)) * to_bf16(static_cast<float>(theta)));  // BUG
    return {static_cast<float>(std::cos(angle) * scale), static_cast<float>(std::sin(angle) * scale)};
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_bf16_angles() { return std::make_unique<Bf16Angles>(); }

}  // namespace ropecheck
