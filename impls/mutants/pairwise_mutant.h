// The base of the RoPE mutants: a plain, correct pairwise rotation with one virtual hook per
// decision a real implementation makes (which features, which frequencies, which position, how
// cos/sin are formed, which pairing, how results are stored). Each mutant overrides exactly one hook with a bug seen in
// real code, so its file shows the bug in one place and nothing else differs.
#pragma once

#include <cmath>
#include <utility>
#include <vector>

#include "impls/rope/reference_cos_sin.h"
#include "core/frequency.h"
#include "impls/registry.h"

namespace ropecheck::mutants {

class PairwiseMutant : public RopeImpl {
 public:
  RopeCapabilities capabilities() const override {
    // Claims what a real implementation claims, so that every property runs on it.
    RopeCapabilities caps{{Layout::interleaved, Layout::half_split},
                          {AnglePrecision::fp32, AnglePrecision::fp64},
                          true, "scalar", true, ""};
    caps.storage = storage();
    return caps;
  }

 protected:
  // How many leading features are rotated.
  virtual int rotated_features(const RopeSpec& spec) const { return spec.rotary_dim; }
  // theta_i for i < rotated_features/2.
  virtual std::vector<double> frequencies(const RopeSpec& spec) const {
    RopeSpec s = spec;
    s.rotary_dim = rotated_features(spec);
    return inverse_frequencies(s);
  }
  virtual std::int64_t effective_position(std::int64_t m) const { return m; }
  // cos and sin of m * theta times the attention factor `scale`, formed as the spec's angle
  // precision says.
  virtual std::pair<float, float> cos_sin(const RopeSpec& spec, std::int64_t m, double theta,
                                          double scale) const {
    return reference_cos_sin(spec.angle_precision, m, theta, scale);
  }
  // Which pairing the data is read with.
  virtual Layout pairing(const RopeSpec& spec) const { return spec.layout; }
  // What results are stored in, and the value a result y becomes there (fp32: y itself).
  virtual StorageType storage() const { return StorageType::fp32; }
  virtual float stored(float y) const { return y; }

  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    rotate(spec, q, positions);
    rotate(spec, k, positions);
  }

 private:
  void rotate(const RopeSpec& spec, HeadTensor x, PositionIds positions) const {
    const int features = rotated_features(spec);
    const auto half = static_cast<std::size_t>(features / 2);
    const auto theta = frequencies(spec);
    const double scale = attention_factor(spec);
    const bool interleaved = pairing(spec) == Layout::interleaved;
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      const std::int64_t m = effective_position(positions[static_cast<std::size_t>(t)]);
      for (std::size_t i = 0; i < half; ++i) {
        const auto [c, s] = cos_sin(spec, m, theta[i], scale);
        const std::size_t a = interleaved ? 2 * i : i;
        const std::size_t b = interleaved ? 2 * i + 1 : i + half;
        for (std::int64_t h = 0; h < x.heads; ++h) {
          const auto row = x.row(t, h);
          const float xa = row[a], xb = row[b];
          row[a] = stored(c * xa - s * xb);
          row[b] = stored(s * xa + c * xb);
        }
      }
    }
  }
};

}  // namespace ropecheck::mutants
