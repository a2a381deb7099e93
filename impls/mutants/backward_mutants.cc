// The backward-pass mutants (backward_mutant.h): each a bug seen in hand-written RoPE backward
// kernels, which are written apart from the forward ones (Liger Kernel, Unsloth, TransformerEngine,
// ggml's rope_back). The forward is right in all three.
#include <memory>

#include "impls/mutants/backward_mutant.h"

namespace ropecheck {
namespace {

// The backward kernel copied from the forward without flipping the sine: R(m) dy instead of
// R(m)^T dy. Still a rotation of the right norm; the oracle, the adjoint identity and R^T R = I see it.
class BackwardSinNotFlipped final : public mutants::BackwardMutant {
 public:
  std::string_view id() const override { return "mutant/backward_sin_not_flipped"; }
  std::string_view summary() const override {
    return "backward = the forward rotation: the sine's sign not flipped for the gradient";
  }

 protected:
  void backward(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                PositionIds positions) const override {
    RopeSpec forward = spec;
    forward.pass = Pass::forward;  // BUG
    correct(forward, q, k, positions);
  }
};

// YaRN's (or LongRoPE's) attention factor applied in the forward but not to the gradient, as in a
// backward that recomputes cos/sin from the frequencies alone: dx comes out a times too small.
class BackwardAttentionFactorDropped final : public mutants::BackwardMutant {
 public:
  std::string_view id() const override { return "mutant/backward_attention_factor_dropped"; }
  std::string_view summary() const override {
    return "gradient rotated by R(m)^T without the attention factor a (YaRN's mscale)";
  }

 protected:
  void backward(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                PositionIds positions) const override {
    RopeSpec unscaled = spec;
    unscaled.scaling.attention_factor = 1.0;  // BUG: cos and sin without a
    correct(unscaled, q, k, positions);
  }
};

// The pass-through tail's gradient left at zero, as a backward that writes only the rotary
// features of a freshly zeroed dx (partial rotary: GPT-NeoX, Phi): the tail gets no gradient.
class BackwardTailZeroed final : public mutants::BackwardMutant {
 public:
  std::string_view id() const override { return "mutant/backward_tail_zeroed"; }
  std::string_view summary() const override {
    return "partial rotary's pass-through features get a zero gradient in the backward";
  }

 protected:
  void backward(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                PositionIds positions) const override {
    correct(spec, q, k, positions);
    for (HeadTensor x : {q, k}) {
      for (std::int64_t t = 0; t < x.tokens; ++t) {
        for (std::int64_t h = 0; h < x.heads; ++h) {
          const auto row = x.row(t, h);
          for (int f = spec.rotary_dim; f < spec.head_dim; ++f) row[static_cast<std::size_t>(f)] = 0.0f;  // BUG
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_backward_sin_not_flipped() {
  return std::make_unique<BackwardSinNotFlipped>();
}
std::unique_ptr<RopeImpl> make_mutant_backward_attention_factor_dropped() {
  return std::make_unique<BackwardAttentionFactorDropped>();
}
std::unique_ptr<RopeImpl> make_mutant_backward_tail_zeroed() {
  return std::make_unique<BackwardTailZeroed>();
}

}  // namespace ropecheck
