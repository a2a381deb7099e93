// A port's outputs for one golden case judged against the float64 expected values with the
// manifest's own tolerance (manifest_reader.h), element by element, as the manifest tells a
// porter to: the worst error as a fraction of its bound, and where it is.
//   ropecheck check --vectors /tmp/golden --outputs OUT
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/spec.h"
#include "vectors/manifest_reader.h"

namespace ropecheck {

struct WorstError {
  // error / bound; infinite for a NaN where a number was expected, a non-zero output of a zero
  // pair, or a changed feature past rotary_dim. <= 1 passes.
  double ratio = 0.0;
  double error = 0.0;  // RoPE: units of eps32 * max(|pair|, floor); sinusoidal: units of eps32
  double bound = 0.0;
  std::string where;   // "q token 2 head 0 feature 5 (pair 5, position 4095, theta ...): got .."
  std::string units;   // of error and bound where not the case kind's (a rope_cache case's cache)
};

// The worse of two (the earlier one on a tie).
WorstError worse_of(const WorstError& a, const WorstError& b);

// Tensor `tensor` ("q" or "k") of a RoPE case, [tokens][heads][head_dim] as stored and widened to
// float (exact for bf16 and fp16): the case's inputs, the port's outputs and the float64 expected
// values, with the case's positions (axis_count(spec) per token, token-major) and theta_i.
// `angles` is how the port forms m * theta_i.
WorstError judge_rope_tensor(const ManifestCase& c, const std::string& tensor,
                             std::span<const float> input, std::span<const float> output,
                             std::span<const double> expected,
                             std::span<const std::int64_t> positions,
                             std::span<const double> theta, AnglePrecision angles);

// A sinusoidal case's table, [positions][d_model].
WorstError judge_sinusoidal_table(const ManifestCase& c, std::span<const float> output,
                                  std::span<const double> expected,
                                  std::span<const std::int64_t> positions, AnglePrecision angles);

}  // namespace ropecheck
