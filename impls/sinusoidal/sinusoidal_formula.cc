// sinusoidal/formula: the sinusoidal table by seed 003's formula, in double, rounded once:
//   PE(pos, 2i) = sin(pos / base^(2i/d)),  PE(pos, 2i+1) = cos(pos / base^(2i/d)).
#include <cmath>
#include <memory>

#include "impls/registry.h"

namespace ropecheck {
namespace {

class SinusoidalFormula final : public SinusoidalImpl {
 public:
  std::string_view id() const override { return "sinusoidal/formula"; }
  std::string_view summary() const override {
    return "PE(pos,2i)=sin(pos/base^(2i/d)), PE(pos,2i+1)=cos(...) in double (seed 003)";
  }
  AnglePrecision angle_precision() const override { return AnglePrecision::fp64; }

 protected:
  void compute(const SinusoidalSpec& spec, std::span<const std::int64_t> positions,
               std::span<float> out) const override {
    const auto d = static_cast<std::size_t>(spec.d_model);
    for (std::size_t t = 0; t < positions.size(); ++t) {
      for (std::size_t i = 0; i < d / 2; ++i) {
        const double angle = static_cast<double>(positions[t]) /
                             std::pow(spec.base, static_cast<double>(2 * i) / static_cast<double>(d));
        out[t * d + 2 * i] = static_cast<float>(std::sin(angle));
        out[t * d + 2 * i + 1] = static_cast<float>(std::cos(angle));
      }
    }
  }
};

}  // namespace

std::unique_ptr<SinusoidalImpl> make_sinusoidal_formula() {
  return std::make_unique<SinusoidalFormula>();
}

}  // namespace ropecheck
