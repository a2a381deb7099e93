// theta_recurrence/scalar: angles formed the way ggml's rope cache forms them (and kernels that
// cache theta): theta_scale = powf(base', -2/rotary_dim) in fp32 once, then per token
//   angle_0 = float(m),   angle_(i+1) = angle_i * theta_scale   (fp32, pair by pair)
// with base' the (NTK) base the spec rotates with. Any other scaling (linear, YaRN, Llama 3,
// LongRoPE) is one more fp32 multiply per pair by float(theta_i / theta'_i), the spec's scaled
// frequency over the recurrence's unscaled one, as ggml divides by freq_factors and multiplies
// by freq_scale; cos and sin times float(attention factor). It declares fp32_recurrence only:
// the tolerance model's recurrence term (core/tolerance.h) is what it is held to, and the same
// kernel held to the fp32-angle bound fails at high pair indices (tests/impls).
// The backward flips the sine's sign after forming it, as ggml's rope_back does (sin_sign = -1).
#include <cmath>
#include <memory>
#include <vector>

#include "core/frequency.h"
#include "impls/registry.h"
#include "impls/rope/reference_rope.h"

namespace ropecheck {
namespace {

struct RecurrenceCosSin {
  std::vector<float> cos;  // rotary_dim/2 entries, one per pair
  std::vector<float> sin;
};

// The per-spec constants of the recurrence: theta_scale and each pair's scaling multiplier.
struct Recurrence {
  float theta_scale;
  std::vector<float> scaling;  // float(theta_i / base'^(-2i/d)): 1 for none, NTK, dynamic NTK
  float attention;             // float(attention factor)
};

Recurrence recurrence_of(const RopeSpec& spec) {
  const double base = ntk_base(spec);
  const auto d = static_cast<float>(spec.rotary_dim);
  Recurrence r{std::pow(static_cast<float>(base), -2.0f / d), {},
               static_cast<float>(attention_factor(spec))};
  const std::vector<double> theta = inverse_frequencies(spec);
  r.scaling.resize(theta.size());
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const double unscaled = std::pow(base, -2.0 * static_cast<double>(i) / spec.rotary_dim);
    r.scaling[i] = static_cast<float>(theta[i] / unscaled);
  }
  return r;
}

// One recurrence per axis, each from its own position, all advanced every pair (ggml's
// rope_multi: theta_t, theta_h, theta_w), pair i taking its axis's.
RecurrenceCosSin recurrence_cos_sin(const Recurrence& r, const reference::TokenPositions& m,
                                    Pass pass) {
  const std::size_t half = r.scaling.size();
  RecurrenceCosSin cs{std::vector<float>(half), std::vector<float>(half)};
  float angles[kMaxAxes] = {};
  for (std::size_t a = 0; a < m.of_axis.size(); ++a) {
    angles[a] = static_cast<float>(m.of_axis[a]);  // exact: |m| <= 2^24
  }
  for (std::size_t i = 0; i < half; ++i) {
    const float angle = angles[(*m.pair_axis)[i]];
    const float scaled = r.scaling[i] == 1.0f ? angle : angle * r.scaling[i];
    cs.cos[i] = std::cos(scaled);
    cs.sin[i] = pass == Pass::forward ? std::sin(scaled) : -std::sin(scaled);
    if (r.attention != 1.0f) {
      cs.cos[i] *= r.attention;
      cs.sin[i] *= r.attention;
    }
    for (float& a : angles) a *= r.theta_scale;
  }
  return cs;
}

void rotate_recurrence_pairs(const RopeSpec& spec, const RecurrenceCosSin& cs, std::span<float> head) {
  const std::size_t half = cs.cos.size();
  for (std::size_t i = 0; i < half; ++i) {
    const std::size_t a = spec.layout == Layout::interleaved ? 2 * i : i;
    const std::size_t b = spec.layout == Layout::interleaved ? 2 * i + 1 : i + half;
    const float xa = head[a], xb = head[b];
    head[a] = xa * cs.cos[i] - xb * cs.sin[i];
    head[b] = xa * cs.sin[i] + xb * cs.cos[i];
  }
}

class ThetaRecurrence final : public RopeImpl {
 public:
  std::string_view id() const override { return "theta_recurrence/scalar"; }
  std::string_view summary() const override {
    return "ggml's rope cache: angle_(i+1) = angle_i * powf(base, -2/d) in fp32, from float(m)";
  }
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps = reference::capabilities();
    caps.angle_precisions = {AnglePrecision::fp32_recurrence};
    // Vision's frequencies restart at each section: no single recurrence over the pairs.
    caps.axis_modes = {AxisMode::none, AxisMode::mrope, AxisMode::imrope};
    return caps;
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    const Recurrence r = recurrence_of(spec);
    reference::rotate_every_head(
        spec, q, k, positions,
        [&](const std::vector<double>&, double, const reference::TokenPositions& m) {
          return recurrence_cos_sin(r, m, spec.pass);
        },
        [&](const RecurrenceCosSin& cs, std::span<float> head) { rotate_recurrence_pairs(spec, cs, head); });
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_theta_recurrence_scalar() {
  return std::make_unique<ThetaRecurrence>();
}

}  // namespace ropecheck
