// oracle_f64/scalar: the truth. Long-double frequencies and angles, long-double rotation,
// whatever the spec's angle precision; see impls/oracle/oracle.h.
// Its registry entry rounds the exact result to fp32 once (<= 0.5 ulp), so it also passes every
// property as an implementation; properties compare against oracle_rope()'s double output.
#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"

namespace ropecheck {

namespace {

constexpr long double kTwoPi = 6.283185307179586476925286766559005768L;

// theta_i = exp(-t_i ln base), t_i = 2i/d: a different formula from frequency.cc's pow, so that
// the shared table is checked against an independent computation, in 64-bit-significand
// arithmetic. `log_base` may be a scaled (NTK) base's logarithm.
std::vector<long double> exp_table(long double log_base, int rotary_dim) {
  std::vector<long double> theta(static_cast<std::size_t>(rotary_dim / 2));
  for (std::size_t i = 0; i < theta.size(); ++i) {
    theta[i] = std::exp(-2.0L * static_cast<long double>(i) / rotary_dim * log_base);
  }
  return theta;
}

}  // namespace

std::vector<long double> oracle_inverse_frequencies(const RopeSpec& spec) {
  validate(spec);
  const RopeScaling& s = spec.scaling;
  const int d = spec.rotary_dim;
  const long double log_base = std::log(static_cast<long double>(spec.base));
  if (spec.axes.mode == AxisMode::vision) {
    // Each axis is its own half-width RoPE over d/2 features (HF's VisionRotaryEmbedding(d/2)),
    // its table looked up by row and by column; spec.h refuses scaling here.
    const int row_pairs = spec.axes.sections[0];
    const auto half_width = exp_table(log_base * 2.0L, d);  // exponent 2j/(d/2) = 2 (2j/d)
    std::vector<long double> theta(static_cast<std::size_t>(d / 2));
    for (int i = 0; i < d / 2; ++i) {
      const int j = i < row_pairs ? i : i - row_pairs;
      theta[static_cast<std::size_t>(i)] = half_width[static_cast<std::size_t>(j)];
    }
    return theta;
  }
  const long double factor = s.factor;
  const auto max_l = static_cast<long double>(s.original_max_position);
  switch (s.kind) {
    case ScalingKind::none:
      return exp_table(log_base, d);
    case ScalingKind::linear: {
      auto theta = exp_table(log_base, d);
      for (auto& t : theta) t /= factor;
      return theta;
    }
    case ScalingKind::ntk:
    case ScalingKind::dynamic_ntk: {
      // ln base' = ln base + d/(d-2) ln f; f = factor, or for a dynamic spec longer than L
      // f = 1 + factor (L'/L - 1), the same as factor L'/L - (factor - 1).
      long double f = factor;
      if (s.kind == ScalingKind::dynamic_ntk) {
        f = s.sequence_length > s.original_max_position
                ? 1.0L + factor * (static_cast<long double>(s.sequence_length) / max_l - 1.0L)
                : 1.0L;
      }
      if (d == 2) return exp_table(log_base, d);  // theta_0 = 1 whatever the base
      return exp_table(log_base + d / (d - 2.0L) * std::log(f), d);
    }
    case ScalingKind::yarn: {
      // Correction dims: d (ln L - ln(2 pi r)) / (2 ln base), r = beta_fast, beta_slow.
      const auto dim_for = [&](long double r) {
        return d * (std::log(max_l) - std::log(kTwoPi * r)) / (2.0L * log_base);
      };
      long double low = dim_for(s.beta_fast), high = dim_for(s.beta_slow);
      if (s.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
      }
      low = std::max(low, 0.0L);
      high = std::min(high, d - 1.0L);
      if (high == low) high += 0.001L;
      auto theta = exp_table(log_base, d);
      for (std::size_t i = 0; i < theta.size(); ++i) {
        const long double ramp =
            std::clamp((static_cast<long double>(i) - low) / (high - low), 0.0L, 1.0L);
        theta[i] *= 1.0L - ramp * (1.0L - 1.0L / factor);  // ramp = 1: theta / factor
      }
      return theta;
    }
    case ScalingKind::llama3: {
      // In frequencies rather than wavelengths: high frequencies (theta > 2 pi hf / L) are kept,
      // low ones (theta < 2 pi lf / L) divided by the factor, the band between blended by
      // smooth = (L theta / (2 pi) - lf) / (hf - lf).
      const long double lf = s.low_freq_factor, hf = s.high_freq_factor;
      auto theta = exp_table(log_base, d);
      for (auto& t : theta) {
        const long double cycles = max_l * t / kTwoPi;  // rotations within L
        if (cycles > hf) continue;
        if (cycles < lf) {
          t /= factor;
          continue;
        }
        const long double smooth = (cycles - lf) / (hf - lf);
        t *= smooth + (1.0L - smooth) / factor;
      }
      return theta;
    }
    case ScalingKind::longrope: {
      const auto& ext =
          s.sequence_length > s.original_max_position ? s.long_factor : s.short_factor;
      auto theta = exp_table(log_base, d);
      for (std::size_t i = 0; i < theta.size(); ++i) theta[i] /= static_cast<long double>(ext[i]);
      return theta;
    }
  }
  return {};
}

long double oracle_attention_factor(const RopeSpec& spec) {
  validate(spec);
  const RopeScaling& s = spec.scaling;
  if (s.attention_factor) return *s.attention_factor;
  const long double factor = s.factor;
  if (s.kind == ScalingKind::yarn && factor > 1) {
    // DeepSeek's mscale over mscale_all_dim when both are non-zero (HF's truthiness test), each
    // 1 + m ln(factor) / 10; else m = 1.
    const long double m = s.mscale.value_or(0.0), m_all = s.mscale_all_dim.value_or(0.0);
    const long double log_factor = std::log(factor);
    if (m != 0 && m_all != 0) return (1.0L + m * log_factor / 10.0L) / (1.0L + m_all * log_factor / 10.0L);
    return 1.0L + log_factor / 10.0L;
  }
  if (s.kind == ScalingKind::longrope && factor > 1) {
    return std::sqrt(1.0L + std::log(factor) /
                                std::log(static_cast<long double>(s.original_max_position)));
  }
  return 1.0L;
}

namespace {

// The scaled cos/sin of every pair at each position met, for the spec of the last call on this
// thread: the properties ask the oracle about the same positions many times over (q and k, each
// head alone, blocks of a model shape's tokens), and sinl/cosl were most of its time. The values
// are those computed without the table, bit for bit.
class AngleTable {
 public:
  bool is_for(const RopeSpec& spec) const {
    return spec.rotary_dim == rotary_dim_ && spec.base == base_ && spec.scaling == scaling_ &&
           spec.axes == axes_;
  }
  void reset(const RopeSpec& spec) {
    rotary_dim_ = spec.rotary_dim;
    base_ = spec.base;
    scaling_ = spec.scaling;
    axes_ = spec.axes;
    theta_ = oracle_inverse_frequencies(spec);
    scale_ = oracle_attention_factor(spec);
    rows_.clear();
    values_.clear();
  }
  // (cos, sin) of pair i at [2i], [2i + 1], times the attention factor.
  const long double* row(std::int64_t position) {
    if (rows_.size() >= kMaxRows) {  // a bounded cache: 2^16 rows of up to 2 KiB each at most
      rows_.clear();
      values_.clear();
    }
    const auto [at, fresh] = rows_.try_emplace(position, values_.size());
    if (fresh) {
      for (const long double theta : theta_) {
        // |m theta| <= 2^24: the long double product keeps ~2^-64 relative accuracy, and
        // sinl/cosl reduce the argument exactly.
        const long double angle = static_cast<long double>(position) * theta;
        values_.push_back(scale_ * std::cos(angle));
        values_.push_back(scale_ * std::sin(angle));
      }
    }
    return values_.data() + at->second;
  }

 private:
  static constexpr std::size_t kMaxRows = std::size_t{1} << 16;
  int rotary_dim_ = -1;
  double base_ = 0;
  RopeScaling scaling_;
  PositionAxes axes_;
  std::vector<long double> theta_;
  long double scale_ = 1;
  std::unordered_map<std::int64_t, std::size_t> rows_;  // position -> its row's offset in values_
  std::vector<long double> values_;
};

AngleTable& angle_table(const RopeSpec& spec) {
  thread_local AngleTable table;
  if (!table.is_for(spec)) table.reset(spec);
  return table;
}


// The axis of each pair, from the models' own descriptions rather than position_axes.cc's rule:
// mrope and vision split the pairs at the running sums of the sections (HF's
// torch.split(mrope_section)); imrope lets h and w overwrite t's pairs from offsets 1 and 2 in
// steps of 3 while their sections last (HF Qwen3-VL's apply_interleaved_mrope).
std::vector<int> oracle_pair_axes(const RopeSpec& spec) {
  const int pairs = spec.rotary_dim / 2;
  std::vector<int> axis(static_cast<std::size_t>(pairs), 0);
  const auto& s = spec.axes.sections;
  switch (spec.axes.mode) {
    case AxisMode::none: break;
    case AxisMode::mrope:
    case AxisMode::vision: {
      int first = 0;
      for (int a = 0; a < kMaxAxes; ++a) {
        for (int i = first; i < first + s[static_cast<std::size_t>(a)] && i < pairs; ++i) {
          axis[static_cast<std::size_t>(i)] = a;
        }
        first += s[static_cast<std::size_t>(a)];
      }
      break;
    }
    case AxisMode::imrope:
      for (int a = 1; a < kMaxAxes; ++a) {
        for (int i = a; i < 3 * s[static_cast<std::size_t>(a)] && i < pairs; i += 3) {
          axis[static_cast<std::size_t>(i)] = a;
        }
      }
      break;
  }
  return axis;
}


// The rotation of validated input, in long double, of fp32 or (a normalized input, QK-norm's)
// double elements.
template <typename Element>
std::vector<double> rotate_exact(const RopeSpec& spec, std::span<const Element> x, std::int64_t tokens,
                                 std::int64_t heads, PositionIds positions) {
  const int pairs = spec.rotary_dim / 2;
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  std::vector<double> out(x.begin(), x.end());  // the tail passes through exactly
  AngleTable& table = angle_table(spec);
  const int axes = axis_count(spec);
  const std::vector<int> axis_of = oracle_pair_axes(spec);
  std::vector<long double> gathered(static_cast<std::size_t>(2 * pairs));
  for (std::int64_t t = 0; t < tokens; ++t) {
    const long double* cs = nullptr;
    if (axes == 1) {
      cs = table.row(positions[static_cast<std::size_t>(t)]);
    } else {
      // Each pair's cos/sin from the row of its axis's position (copied out: the next row() may
      // move the table's storage).
      for (int a = 0; a < axes; ++a) {
        const long double* row = table.row(positions[static_cast<std::size_t>(t * axes + a)]);
        for (int i = 0; i < pairs; ++i) {
          if (axis_of[static_cast<std::size_t>(i)] != a) continue;
          gathered[static_cast<std::size_t>(2 * i)] = row[2 * i];
          gathered[static_cast<std::size_t>(2 * i + 1)] = row[2 * i + 1];
        }
      }
      cs = gathered.data();
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
        const auto ci = cs[2 * i], si = cs[2 * i + 1];
        if (spec.pass == Pass::forward) {  // the block [[c, -s], [s, c]] times (xa, xb)
          out[a] = static_cast<double>(ci * xa - si * xb);
          out[b] = static_cast<double>(si * xa + ci * xb);
        } else {  // its transpose [[c, s], [-s, c]] times the gradient (xa, xb)
          out[a] = static_cast<double>(ci * xa + si * xb);
          out[b] = static_cast<double>(ci * xb - si * xa);
        }
      }
    }
  }
  return out;
}

}  // namespace

std::vector<double> oracle_rope(const RopeSpec& spec, std::span<const float> x,
                                std::int64_t tokens, std::int64_t heads, PositionIds positions) {
  validate(spec);
  // validate_tensor wants a mutable view; it only reads.
  const HeadTensor view{std::span<float>(const_cast<float*>(x.data()), x.size()), tokens, heads,
                        spec.head_dim};
  validate_tensor(spec, view, positions, "x");
  return rotate_exact(spec, x, tokens, heads, positions);
}

std::vector<double> oracle_rope(const RopeSpec& spec, std::span<const double> x, std::int64_t tokens,
                                std::int64_t heads, PositionIds positions) {
  validate(spec);
  // The same checks on a float tensor of the same shape (its values are not read).
  std::vector<float> shape(x.size());
  validate_tensor(spec, HeadTensor{shape, tokens, heads, spec.head_dim}, positions, "x");
  return rotate_exact(spec, x, tokens, heads, positions);
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
    RopeCapabilities caps{{Layout::interleaved, Layout::half_split},
                          {AnglePrecision::fp32, AnglePrecision::fp64},
                          true, "scalar", true, ""};
    caps.axis_modes.assign(std::begin(kAllAxisModes), std::end(kAllAxisModes));
    caps.passes.assign(std::begin(kAllPasses), std::end(kAllPasses));
    return caps;
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
