// Shared RoPE property plumbing (see rope_harness.h).
#include "properties/harness/rope_harness.h"

#include <rapidcheck.h>

#include <cstring>

#include "properties/harness/guarded_apply.h"

namespace ropecheck {

std::pair<std::size_t, std::size_t> pair_features(const RopeSpec& spec, int i) {
  const auto idx = static_cast<std::size_t>(i);
  if (spec.layout == Layout::interleaved) return {2 * idx, 2 * idx + 1};
  return {idx, idx + static_cast<std::size_t>(spec.rotary_dim / 2)};
}

std::vector<float> rotated(const RopeImpl& impl, const RopeSpec& spec, std::span<const float> x,
                           std::int64_t heads, std::span<const std::int64_t> positions) {
  std::vector<float> y(x.begin(), x.end()), no_k;
  apply_guarded(impl, spec, y, heads, no_k, 0, positions);
  return y;
}

void fail_if_over(const WorstElement& worst, std::string_view what) {
  if (worst.ratio > 1.0) {
    RC_FAIL(fmt::format("{}: error {:.4g} > bound {:.4g} ({}) at {}", what, worst.error,
                        worst.bound, kPairUnits, worst.where));
  }
}

WorstElement tail_changes(const RopeSpec& spec, std::span<const float> x, std::span<const float> y,
                          std::int64_t heads) {
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const std::size_t rows = x.size() / dim;
  for (std::size_t row = 0; row < rows; ++row) {
    for (std::size_t j = static_cast<std::size_t>(spec.rotary_dim); j < dim; ++j) {
      if (std::memcmp(&x[row * dim + j], &y[row * dim + j], sizeof(float)) != 0) {
        return {1.0, 1.0, 0.0,
                fmt::format("token {} head {} tail feature {}: {:.9g} became {:.9g}",
                            row / static_cast<std::size_t>(heads), row % static_cast<std::size_t>(heads),
                            j, x[row * dim + j], y[row * dim + j])};
      }
    }
  }
  return {};
}

}  // namespace ropecheck
