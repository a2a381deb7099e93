// mutant/fp16_angles: the position, theta and the angle m * theta formed in IEEE
// half precision (a model run in fp16 that builds its cos/sin cache in the activation dtype):
// 11 significant bits, positions above 65504 overflow to Inf.
#include <algorithm>
#include <cmath>
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class Fp16Angles final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/fp16_angles"; }
  std::string_view summary() const override { return "forms m, theta and m*theta in fp16 (11-bit significand, max 65504)"; }

 protected:
  std::pair<float, float> cos_sin(const RopeSpec&, std::int64_t m, double theta,
                                  double scale) const override {
    const float angle = round_to_fp16(round_to_fp16(static_cast<float>(m)) *  // BUG
                                      round_to_fp16(static_cast<float>(theta)));
    return {static_cast<float>(std::cos(angle) * scale), static_cast<float>(std::sin(angle) * scale)};
  }

 private:
  // Round to nearest even at fp16 precision: 11 significant bits for normals (|x| >= 2^-14),
  // a fixed quantum of 2^-24 below, Inf from 65520 (halfway above the largest half, 65504).
  static float round_to_fp16(float x) {
    if (!std::isfinite(x)) return x;
    const float magnitude = std::fabs(x);
    if (magnitude >= 65520.0f) return std::copysign(INFINITY, x);
    int exponent = 0;
    std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
    const int quantum = std::max(exponent - 11, -24);
    return std::copysign(std::ldexp(std::nearbyint(std::ldexp(magnitude, -quantum)), quantum), x);
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_fp16_angles() { return std::make_unique<Fp16Angles>(); }

}  // namespace ropecheck
