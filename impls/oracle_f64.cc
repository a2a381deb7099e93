// oracle_f64/scalar: the truth. Long-double frequencies and angles, long-double rotation,
// whatever the spec's angle precision; see include/ropecheck/oracle.h.
// Its registry entry rounds the exact result to fp32 once (<= 0.5 ulp), so it also passes every
// property as an implementation; properties compare against oracle_rope()'s double output.
#include <cmath>
#include <memory>

#include "ropecheck/errors.h"
#include "ropecheck/oracle.h"
#include "ropecheck/registry.h"

namespace ropecheck {

std::vector<long double> oracle_inverse_frequencies(const RopeSpec& spec) {
  validate(spec);
  const int pairs = spec.rotary_dim / 2;
  std::vector<long double> theta(static_cast<std::size_t>(pairs));
  for (int i = 0; i < pairs; ++i) {
    // exp(-2i/r * ln base): a different formula from frequency.cc's pow, so that the shared table
    // is checked against an independent computation, in 64-bit-significand arithmetic.
    theta[static_cast<std::size_t>(i)] =
        std::exp(-2.0L * i / spec.rotary_dim * std::log(static_cast<long double>(spec.base)));
  }
  return theta;
}

std::vector<double> oracle_rope(const RopeSpec& spec, std::span<const float> x,
                                std::int64_t tokens, std::int64_t heads, PositionIds positions) {
  validate(spec);
  // validate_tensor wants a mutable view; it only reads.
  const HeadTensor view{std::span<float>(const_cast<float*>(x.data()), x.size()), tokens, heads,
                        spec.head_dim};
  validate_tensor(spec, view, positions, "x");

  const auto theta = oracle_inverse_frequencies(spec);
  const int pairs = spec.rotary_dim / 2;
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  std::vector<double> out(x.begin(), x.end());  // the tail passes through exactly
  std::vector<long double> c(static_cast<std::size_t>(pairs)), s(static_cast<std::size_t>(pairs));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < pairs; ++i) {
      // |m theta| <= 2^24: the long double product keeps ~2^-64 relative accuracy, and sinl/cosl
      // reduce the argument exactly.
      const long double angle = static_cast<long double>(positions[static_cast<std::size_t>(t)]) *
                                theta[static_cast<std::size_t>(i)];
      c[static_cast<std::size_t>(i)] = std::cos(angle);
      s[static_cast<std::size_t>(i)] = std::sin(angle);
    }
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::size_t row = static_cast<std::size_t>(t * heads + h) * dim;
      for (int i = 0; i < pairs; ++i) {
        const auto [a, b] = spec.layout == Layout::interleaved
                                ? std::pair{row + 2 * static_cast<std::size_t>(i),
                                            row + 2 * static_cast<std::size_t>(i) + 1}
                                : std::pair{row + static_cast<std::size_t>(i),
                                            row + static_cast<std::size_t>(i + pairs)};
        const long double xa = x[a], xb = x[b];
        const auto ci = c[static_cast<std::size_t>(i)], si = s[static_cast<std::size_t>(i)];
        out[a] = static_cast<double>(ci * xa - si * xb);
        out[b] = static_cast<double>(si * xa + ci * xb);
      }
    }
  }
  return out;
}

namespace {

class OracleF64 final : public RopeImpl {
 public:
  std::string_view id() const override { return "oracle_f64/scalar"; }
  std::string_view summary() const override {
    return "float64 oracle: long-double angles and rotation, rounded to fp32 once; the truth";
  }
  RopeCapabilities capabilities() const override {
    // Supports both declared angle precisions by being exact for either.
    return {{Layout::interleaved, Layout::half_split},
            {AnglePrecision::fp32, AnglePrecision::fp64},
            true, "scalar", true, ""};
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    for (HeadTensor x : {q, k}) {
      if (x.heads == 0) continue;  // the single-tensor form
      const auto exact = oracle_rope(spec, x.data, x.tokens, x.heads, positions);
      for (std::size_t j = 0; j < exact.size(); ++j) x.data[j] = static_cast<float>(exact[j]);
    }
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_oracle_f64() { return std::make_unique<OracleF64>(); }

}  // namespace ropecheck
