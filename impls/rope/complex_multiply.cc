// complex_multiply/scalar: Meta LLaMA's form (seed 000/002). Each rotary pair is a complex
// number a + bj, freqs_cis = polar(1, m * theta_i) is precomputed per token, and the rotation is
// the complex product (a + bj)(cos + j sin) = (a cos - b sin) + (a sin + b cos) j.
// Natural layout: interleaved, pairs (2i, 2i+1), as `view_as_complex(x.reshape(..., -1, 2))`;
// half-split data pairs (i, i + rotary_dim/2) instead. The backward is autograd's for a complex
// product by a constant: the gradient times conj(freqs_cis).
#include <complex>
#include <memory>
#include <vector>

#include "impls/rope/reference_cos_sin.h"
#include "impls/rope/reference_rope.h"
#include "core/frequency.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

// freqs_cis for one position: rotary_dim/2 unit complex numbers.
std::vector<std::complex<float>> freqs_cis(const RopeSpec& spec, const std::vector<double>& theta,
                                           double scale, const reference::TokenPositions& m) {
  std::vector<std::complex<float>> cis(theta.size());
  for (std::size_t i = 0; i < theta.size(); ++i) {
    // fp32 angles: torch.outer(t, freqs) in fp32, then polar in fp32 (reference_cos_sin.h).
    const auto [c, s] = reference_cos_sin(spec.angle_precision, m.of_pair(i), theta[i], scale);
    cis[i] = {c, s};
  }
  return cis;
}

void multiply(const RopeSpec& spec, const std::vector<std::complex<float>>& cis,
              std::span<float> head) {
  const std::size_t pairs = cis.size();
  for (std::size_t i = 0; i < pairs; ++i) {
    const std::size_t a = spec.layout == Layout::interleaved ? 2 * i : i;
    const std::size_t b = spec.layout == Layout::interleaved ? 2 * i + 1 : i + pairs;
    const std::complex<float> w = spec.pass == Pass::forward ? cis[i] : std::conj(cis[i]);
    const std::complex<float> z = std::complex<float>(head[a], head[b]) * w;
    head[a] = z.real();
    head[b] = z.imag();
  }
}

class ComplexMultiply final : public RopeImpl {
 public:
  std::string_view id() const override { return "complex_multiply/scalar"; }
  std::string_view summary() const override {
    return "Meta LLaMA: pairs as std::complex<float> times freqs_cis = polar(1, m theta_i)";
  }
  RopeCapabilities capabilities() const override { return reference::capabilities(); }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    reference::rotate_every_head(
        spec, q, k, positions,
        [&](const std::vector<double>& theta, double scale, const reference::TokenPositions& m) {
          return freqs_cis(spec, theta, scale, m);
        },
        [&](const std::vector<std::complex<float>>& cis, std::span<float> head) {
          multiply(spec, cis, head);
        });
  }

};

}  // namespace

std::unique_ptr<RopeImpl> make_complex_multiply_scalar() {
  return std::make_unique<ComplexMultiply>();
}

}  // namespace ropecheck
