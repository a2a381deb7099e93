// rotation_matrix/scalar: RoPE by its definition (seed 001, RoFormer eq. 15). For each position
// build the block-diagonal rotary_dim x rotary_dim matrix R_m with 2x2 blocks
// [[cos m t_i, -sin m t_i], [sin m t_i, cos m t_i]] and multiply every head vector by it.
// Half-split data is permuted into pair order, multiplied, and permuted back (P^T R_m P).
// The product sums each row over its own 2x2 block only: the structural zeros are not multiplied,
// because 0 * NaN is NaN and a dense sum would spread one NaN over the whole head, which RoPE by
// its definition does not (nonfinite_propagation). O(rotary_dim^2) memory per position: the
// slow, obviously-correct reading of the formula. The backward multiplies by the transpose R_m^T,
// the gradient of y = R_m x by its definition: row i of R_m^T is column i of R_m.
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

// R_m, row-major r x r, in the interleaved basis.
std::vector<float> rotation_matrix(const RopeSpec& spec, const std::vector<double>& theta,
                                   double scale, const reference::TokenPositions& m) {
  const auto r = static_cast<std::size_t>(spec.rotary_dim);
  std::vector<float> matrix(r * r, 0.0f);
  for (std::size_t i = 0; i < r / 2; ++i) {
    const auto [c, s] = reference_cos_sin(spec.angle_precision, m.of_pair(i), theta[i], scale);
    const std::size_t a = 2 * i, b = 2 * i + 1;
    matrix[a * r + a] = c;
    matrix[a * r + b] = -s;
    matrix[b * r + a] = s;
    matrix[b * r + b] = c;
  }
  return matrix;
}

class RotationMatrix final : public RopeImpl {
 public:
  std::string_view id() const override { return "rotation_matrix/scalar"; }
  std::string_view summary() const override {
    return "the definition: the block-diagonal matrix R_m built whole, times x per head (seed 001)";
  }
  RopeCapabilities capabilities() const override { return reference::capabilities(); }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    // R_m is built once per token and shared by every q and k head (GQA-friendly).
    reference::rotate_every_head(
        spec, q, k, positions,
        [&](const std::vector<double>& theta, double scale, const reference::TokenPositions& m) {
          return rotation_matrix(spec, theta, scale, m);
        },
        [&](const std::vector<float>& matrix, std::span<float> head) { multiply(spec, matrix, head); });
  }

 private:
  // y = R x (the backward: R^T x) over the first rotary_dim features, row i summed over its block's columns j = 2
  // floor(i/2) and j + 1 (every other entry of the row is a structural zero); the tail is left
  // as it is.
  static void multiply(const RopeSpec& spec, const std::vector<float>& matrix,
                       std::span<float> head) {
    const auto r = static_cast<std::size_t>(spec.rotary_dim);
    std::vector<float> x(head.begin(), head.end());
    std::vector<int> to;
    if (spec.layout == Layout::half_split) {
      // Bring half-split features into pair order: x[j] = head[to[j]].
      to = interleaved_to_half_split(spec.rotary_dim);
      gather_features(head, x, to);
    }
    std::vector<float> y(x);
    for (std::size_t i = 0; i < r; ++i) {
      const std::size_t block = i & ~std::size_t{1};
      float sum = 0.0f;
      for (std::size_t j = block; j < block + 2; ++j) {
        sum += (spec.pass == Pass::forward ? matrix[i * r + j] : matrix[j * r + i]) * x[j];
      }
      y[i] = sum;
    }
    if (spec.layout == Layout::half_split) {
      scatter_features(y, head, to);
    } else {
      std::copy(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(r), head.begin());
    }
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_rotation_matrix_scalar() {
  return std::make_unique<RotationMatrix>();
}

}  // namespace ropecheck
