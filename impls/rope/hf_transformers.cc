// hf_transformers/scalar: RoPE exactly as HF transformers computes it, op for op in fp32
// (modeling_llama.py LlamaRotaryEmbedding.forward, rotate_half, apply_rotary_pos_emb; the
// frequencies of modeling_rope_utils.py ROPE_INIT_FUNCTIONS):
//   inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
//   freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
//   emb = torch.cat((freqs, freqs), dim=-1)
//   cos = emb.cos() * self.attention_scaling;  sin = emb.sin() * self.attention_scaling
//   q_embed = (q * cos) + (rotate_half(q) * sin)     # rotate_half: cat(-x2, x1)
// The backward is what torch.autograd computes through those ops for grad = dL/dq_embed:
//   grad_q = grad * cos + rotate_half^T(grad * sin),  rotate_half^T(v) = cat(v2, -v1)
// (the gradient of cat(-x2, x1)), each product and the sum in fp32 as autograd rounds them;
// with partial rotary as its partial_rotary_factor models do: the first rotary_dim features are
// rotated, the rest concatenated back unchanged. Half-split layout only (HF's checkpoints are
// permuted into it), fp32 angles only: the accuracy report shows its error growing with
// position beside the fp64-angle kernels, the tolerance model's fp32 term is what it is held to.
#include <cmath>
#include <memory>
#include <vector>

#include "core/frequency.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

class HfTransformers final : public RopeImpl {
 public:
  std::string_view id() const override { return "hf_transformers/scalar"; }
  std::string_view summary() const override {
    return "HF transformers op for op in fp32: inv_freq by powf, fp32 angles, q*cos + "
           "rotate_half(q)*sin";
  }
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps{{Layout::half_split}, {AnglePrecision::fp32}, true, "scalar", true, ""};
    caps.axis_modes.assign(std::begin(kAllAxisModes), std::end(kAllAxisModes));
    caps.passes.assign(std::begin(kAllPasses), std::end(kAllPasses));
    return caps;
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    const std::vector<float> inv_freq = inverse_frequencies_hf_fp32(spec);
    const auto attention_scaling = static_cast<float>(attention_factor(spec));
    const std::size_t half = inv_freq.size();
    const int axes = axis_count(spec);
    const std::vector<int> pick = feature_axes(spec);
    std::vector<float> cos(2 * half), sin(2 * half);
    for (std::int64_t t = 0; t < q.tokens; ++t) {
      for (std::size_t f = 0; f < 2 * half; ++f) {
        // emb = cat(freqs, freqs) of this feature's axis: feature f's frequency is inv_freq[f % half].
        const auto position =
            static_cast<float>(positions[static_cast<std::size_t>(t * axes + pick[f])]);
        const float freq = inv_freq[f % half] * position;  // the matmul of a 1-long inner dimension
        cos[f] = std::cos(freq) * attention_scaling;
        sin[f] = std::sin(freq) * attention_scaling;
      }
      const auto rotate = spec.pass == Pass::forward ? apply_rotary : apply_rotary_backward;
      for (std::int64_t h = 0; h < q.heads; ++h) rotate(cos, sin, q.row(t, h));
      for (std::int64_t h = 0; h < k.heads; ++h) rotate(cos, sin, k.row(t, h));
    }
  }

 private:
  // Which axis's emb each of the rotary_dim features of cos and sin is taken from.
  static std::vector<int> feature_axes(const RopeSpec& spec) {
    const int half = spec.rotary_dim / 2;
    std::vector<int> axis(static_cast<std::size_t>(2 * half), 0);
    const auto& section = spec.axes.sections;
    switch (spec.axes.mode) {
      case AxisMode::none: break;
      case AxisMode::mrope:
      case AxisMode::vision: {
        // cos.split(mrope_section * 2): six chunks over both halves, chunk i from axis i % 3
        // (vision: row then column freqs, the emb doubled by the same cat).
        int f = 0;
        for (int chunk = 0; chunk < 2 * kMaxAxes; ++chunk) {
          for (int n = 0; n < section[static_cast<std::size_t>(chunk % 3)]; ++n) {
            axis[static_cast<std::size_t>(f++)] = chunk % 3;
          }
        }
        break;
      }
      case AxisMode::imrope:
        // freqs_t[..., offset:length:3] = freqs[dim][..., offset:length:3], then cat(freqs_t, freqs_t).
        for (int dim = 1; dim < kMaxAxes; ++dim) {
          for (int i = dim; i < 3 * section[static_cast<std::size_t>(dim)] && i < half; i += 3) {
            axis[static_cast<std::size_t>(i)] = axis[static_cast<std::size_t>(i + half)] = dim;
          }
        }
        break;
    }
    return axis;
  }

  // x[:r] = x[:r] * cos + rotate_half(x[:r]) * sin, each product and the sum rounded to fp32.
  static void apply_rotary(const std::vector<float>& cos, const std::vector<float>& sin,
                           std::span<float> x) {
    const std::size_t half = cos.size() / 2;
    for (std::size_t i = 0; i < half; ++i) {
      const float x1 = x[i], x2 = x[i + half];
      const float y1 = x1 * cos[i] + -x2 * sin[i];
      const float y2 = x2 * cos[i + half] + x1 * sin[i + half];
      x[i] = y1;
      x[i + half] = y2;
    }
  }

  // grad[:r] = grad * cos + rotate_half^T(grad * sin): mul's backward, then cat's and neg's.
  static void apply_rotary_backward(const std::vector<float>& cos, const std::vector<float>& sin,
                                    std::span<float> grad) {
    const std::size_t half = cos.size() / 2;
    for (std::size_t i = 0; i < half; ++i) {
      const float g1 = grad[i], g2 = grad[i + half];
      const float g1_sin = g1 * sin[i], g2_sin = g2 * sin[i + half];
      grad[i] = g1 * cos[i] + g2_sin;
      grad[i + half] = g2 * cos[i + half] + -g1_sin;
    }
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_hf_transformers_scalar() {
  return std::make_unique<HfTransformers>();
}

}  // namespace ropecheck
