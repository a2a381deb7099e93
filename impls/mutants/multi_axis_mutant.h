// The base of the multi-axis RoPE mutants (core/position_axes.h): a plain, correct rotation in
// which each feature takes cos and sin from its own axis's position, with one virtual hook per
// decision a multi-axis port makes (which axis a pair belongs to, which axis a feature of cos/sin
// is taken from, which position stands for an axis, which frequency a pair has). Each mutant
// overrides one hook with a bug seen in real ports; with one axis every hook is the 1D rotation,
// so a mutant fails only where its bug lives.
#pragma once

#include <array>
#include <vector>

#include "core/frequency.h"
#include "impls/registry.h"

namespace ropecheck::mutants {

class MultiAxisMutant : public RopeImpl {
 public:
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps{{Layout::interleaved, Layout::half_split}, {AnglePrecision::fp64},
                          true, "scalar", true, ""};
    caps.axis_modes = axis_modes();
    return caps;
  }

 protected:
  // The modes it claims (one axis always: its bug is in the others).
  virtual std::vector<AxisMode> axis_modes() const = 0;
  // The axis of every pair.
  virtual std::vector<int> pair_axis(const RopeSpec& spec) const {
    return pair_axes(spec.axes, spec.rotary_dim);
  }
  // The axis feature f's cos and sin come from: its pair's.
  virtual std::vector<int> feature_axis(const RopeSpec& spec) const {
    const auto pairs = pair_axis(spec);
    std::vector<int> axis(static_cast<std::size_t>(spec.rotary_dim));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const bool interleaved = spec.layout == Layout::interleaved;
      axis[interleaved ? 2 * i : i] = pairs[i];
      axis[interleaved ? 2 * i + 1 : i + pairs.size()] = pairs[i];
    }
    return axis;
  }
  // Which of the token's positions stands for axis a.
  virtual int position_of_axis(int a) const { return a; }
  virtual std::vector<double> frequencies(const RopeSpec& spec) const {
    return inverse_frequencies(spec);
  }

  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    rotate(spec, q, positions);
    rotate(spec, k, positions);
  }

 private:
  void rotate(const RopeSpec& spec, HeadTensor x, PositionIds positions) const {
    const int axes = axis_count(spec);
    const auto theta = frequencies(spec);
    const auto axis = feature_axis(spec);
    const double scale = attention_factor(spec);
    const auto half = static_cast<std::size_t>(spec.rotary_dim / 2);
    const bool interleaved = spec.layout == Layout::interleaved;
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      // cos and sin of feature f's angle: its pair's frequency at its axis's position.
      const auto angle = [&](std::size_t f, std::size_t pair) {
        const int a = position_of_axis(axis[f]);
        return static_cast<double>(positions[static_cast<std::size_t>(t * axes + a)]) * theta[pair];
      };
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t fa = interleaved ? 2 * i : i, fb = interleaved ? 2 * i + 1 : i + half;
        const double angle_a = angle(fa, i), angle_b = angle(fb, i);
        const auto ca = static_cast<float>(std::cos(angle_a) * scale);
        const auto sa = static_cast<float>(std::sin(angle_a) * scale);
        const auto cb = static_cast<float>(std::cos(angle_b) * scale);
        const auto sb = static_cast<float>(std::sin(angle_b) * scale);
        for (std::int64_t h = 0; h < x.heads; ++h) {
          const auto row = x.row(t, h);
          const float xa = row[fa], xb = row[fb];
          row[fa] = ca * xa - sa * xb;
          row[fb] = sb * xa + cb * xb;
        }
      }
    }
  }
};

}  // namespace ropecheck::mutants
