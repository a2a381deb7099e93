// sinusoidal/div_term: the sinusoidal table as PyTorch code writes it (seed 003's note, "The
// Annotated Transformer"), all in fp32:
//   div_term = exp(arange(0, d, 2) * -(log(base) / d));  pe[:, 0::2] = sin(pos * div_term)
// The fp32 angle's error grows with pos (tolerance.h derives it).
#include <cmath>
#include <memory>
#include <vector>

#include "impls/registry.h"

namespace ropecheck {
namespace {

class SinusoidalDivTerm final : public SinusoidalImpl {
 public:
  std::string_view id() const override { return "sinusoidal/div_term"; }
  std::string_view summary() const override {
    return "PyTorch form: div_term = exp(arange(0,d,2) * -(ln(base)/d)), sin/cos(pos*div_term), fp32";
  }
  AnglePrecision angle_precision() const override { return AnglePrecision::fp32; }

 protected:
  void compute(const SinusoidalSpec& spec, std::span<const std::int64_t> positions,
               std::span<float> out) const override {
    const auto d = static_cast<std::size_t>(spec.d_model);
    // -(math.log(base) / d) is a Python double, cast to fp32 when it meets the float arange.
    const auto scale = static_cast<float>(-(std::log(spec.base) / static_cast<double>(d)));
    std::vector<float> div_term(d / 2);
    for (std::size_t i = 0; i < d / 2; ++i) div_term[i] = std::exp(static_cast<float>(2 * i) * scale);
    for (std::size_t t = 0; t < positions.size(); ++t) {
      const auto pos = static_cast<float>(positions[t]);
      for (std::size_t i = 0; i < d / 2; ++i) {
        const float angle = pos * div_term[i];
        out[t * d + 2 * i] = std::sin(angle);
        out[t * d + 2 * i + 1] = std::cos(angle);
      }
    }
  }
};

}  // namespace

std::unique_ptr<SinusoidalImpl> make_sinusoidal_div_term() {
  return std::make_unique<SinusoidalDivTerm>();
}

}  // namespace ropecheck
