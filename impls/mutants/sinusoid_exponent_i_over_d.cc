// mutant/sinusoid_exponent_i_over_d: seed 001's `_denominator` bug. The code builds
// 10000 ** (arange(0, d) / d) -- exponent j/d for EVERY index j -- so the cos at 2i+1 divides by
// base^((2i+1)/d) instead of base^(2i/d): each (sin, cos) pair mixes two frequencies.
#include <cmath>
#include <memory>

#include "impls/registry.h"

namespace ropecheck {
namespace {

class SinusoidExponentIOverD final : public SinusoidalImpl {
 public:
  std::string_view id() const override { return "mutant/sinusoid_exponent_i_over_d"; }
  std::string_view summary() const override {
    return "seed 001's bug: denominator base^(j/d) for every index j (cos gets (2i+1)/d)";
  }
  AnglePrecision angle_precision() const override { return AnglePrecision::fp64; }

 protected:
  void compute(const SinusoidalSpec& spec, std::span<const std::int64_t> positions,
               std::span<float> out) const override {
    const auto d = static_cast<std::size_t>(spec.d_model);
    for (std::size_t t = 0; t < positions.size(); ++t) {
      for (std::size_t j = 0; j < d; ++j) {
        // BUG: exponent j/d; the correct table uses 2*floor(j/2)/d.
        const double angle = static_cast<double>(positions[t]) /
                             std::pow(spec.base, static_cast<double>(j) / static_cast<double>(d));
        out[t * d + j] = static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
      }
    }
  }
};

}  // namespace

std::unique_ptr<SinusoidalImpl> make_mutant_sinusoid_exponent_i_over_d() {
  return std::make_unique<SinusoidExponentIOverD>();
}

}  // namespace ropecheck
