// rotate_half/scalar: the HF transformers form (seed 002). Per token, emb = cat(freqs, freqs)
// gives cos and sin vectors of length rotary_dim, and
//   y = x * cos + rotate_half(x) * sin,   rotate_half(x) = cat(-x[r/2:], x[:r/2])
// on the half-split layout, pairs (i, i + rotary_dim/2). Interleaved data is permuted into
// half-split order first and back afterwards: the feature form of HF's weight permutation
// (layout_permutation.h), which is what makes this equal to Meta's pairwise rotation.
// The backward is the chain rule through those ops: dx = dy * cos + rotate_half^T(dy * sin), with
// rotate_half^T(v) = cat(v[r/2:], -v[:r/2]) (Liger Kernel's backward, which flips the sine).
#include <cmath>
#include <memory>
#include <vector>

#include "impls/rope/reference_cos_sin.h"
#include "impls/rope/reference_rope.h"
#include "core/frequency.h"
#include "core/layout_permutation.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

struct CosSin {
  std::vector<float> cos;  // rotary_dim entries: cat(cos(freqs), cos(freqs))
  std::vector<float> sin;
};

CosSin cos_sin(const RopeSpec& spec, const std::vector<double>& theta, double scale,
               const reference::TokenPositions& m) {
  const std::size_t half = theta.size();
  CosSin cs{std::vector<float>(2 * half), std::vector<float>(2 * half)};
  for (std::size_t i = 0; i < half; ++i) {
    // fp32 angles: HF's freqs = position_ids.float() @ inv_freq.float() (reference_cos_sin.h).
    const auto [c, s] = reference_cos_sin(spec.angle_precision, m.of_pair(i), theta[i], scale);
    cs.cos[i] = cs.cos[i + half] = c;
    cs.sin[i] = cs.sin[i + half] = s;
  }
  return cs;
}

// q * cos + rotate_half(q) * sin on the first rotary_dim features of a half-split head vector.
void apply_half_split(const CosSin& cs, std::span<float> x) {
  const std::size_t r = cs.cos.size(), half = r / 2;
  std::vector<float> rotated(r);
  for (std::size_t i = 0; i < half; ++i) {
    rotated[i] = -x[i + half];
    rotated[i + half] = x[i];
  }
  for (std::size_t j = 0; j < r; ++j) x[j] = x[j] * cs.cos[j] + rotated[j] * cs.sin[j];
}

// dy * cos + rotate_half^T(dy * sin): the gradient of apply_half_split, in place.
void apply_half_split_backward(const CosSin& cs, std::span<float> dy) {
  const std::size_t r = cs.cos.size(), half = r / 2;
  std::vector<float> dy_sin(r), transposed(r);
  for (std::size_t j = 0; j < r; ++j) dy_sin[j] = dy[j] * cs.sin[j];
  for (std::size_t i = 0; i < half; ++i) {
    transposed[i] = dy_sin[i + half];
    transposed[i + half] = -dy_sin[i];
  }
  for (std::size_t j = 0; j < r; ++j) dy[j] = dy[j] * cs.cos[j] + transposed[j];
}

class RotateHalf final : public RopeImpl {
 public:
  std::string_view id() const override { return "rotate_half/scalar"; }
  std::string_view summary() const override {
    return "HF transformers: x*cos + rotate_half(x)*sin on half-split pairs (seed 002)";
  }
  RopeCapabilities capabilities() const override { return reference::capabilities(); }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    const auto to = interleaved_to_half_split(spec.rotary_dim);
    // cos/sin formed once per token, reused by every q and k head.
    reference::rotate_every_head(
        spec, q, k, positions,
        [&](const std::vector<double>& theta, double scale, const reference::TokenPositions& m) {
          return cos_sin(spec, theta, scale, m);
        },
        [&](const CosSin& cs, std::span<float> head) { apply(spec, cs, to, head); });
  }

 private:
  static void apply(const RopeSpec& spec, const CosSin& cs, const std::vector<int>& to,
                    std::span<float> head) {
    const auto rotate = spec.pass == Pass::forward ? apply_half_split : apply_half_split_backward;
    if (spec.layout == Layout::half_split) {
      rotate(cs, head);
      return;
    }
    // Interleaved: half[to[j]] = head[j], rotate, then head[j] = half[to[j]].
    std::vector<float> half(head.size());
    scatter_features(head, half, to);
    rotate(cs, half);
    gather_features(half, head, to);
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_rotate_half_scalar() { return std::make_unique<RotateHalf>(); }

}  // namespace ropecheck
