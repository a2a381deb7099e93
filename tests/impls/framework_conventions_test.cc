// How other frameworks' RoPE parameters map to a ropecheck RopeSpec (README "Conventions of other
// frameworks"), one golden case per row of that table. Each case computes the expected output
// with a separate, plain double implementation of that framework's published formula (written
// here from the framework's source, never from ropecheck's frequency functions), maps the
// framework's parameters to a spec with the mapping functions below, and holds oracle_rope and
// every real implementation supporting the spec to it:
//   - oracle_rope within kOracleUnits (both are the exact rotation in double or better);
//   - implementations within the tolerance model's rotation_bound_units for their storage and
//     angle precision (bf16 ones get inputs already rounded to bf16, as round_to_storage does).
// A wrong mapping must fail: NEOX mapped as NORM (the layouts swapped) is checked to disagree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "core/storage.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

constexpr double kPi = std::numbers::pi;

// A spec and the position ids it rotates the tokens by.
struct Mapped {
  RopeSpec spec;
  std::vector<std::int64_t> positions;
};

// What a framework formula produced for a [tokens][heads][head_dim] input.
struct FrameworkOutput {
  std::vector<double> y;     // same shape as the input
  std::vector<int> partner;  // per feature of a row: the other feature of its pair, -1 in the tail
  std::vector<int> pair;     // per feature of a row: its pair (frequency) index
  std::vector<double> freq;  // per pair: the framework's inverse frequency (for the bound)
};

using Reference = std::function<FrameworkOutput(const std::vector<float>& x)>;

// Pairs of the two layouts as the frameworks name them.
void pair_adjacent(FrameworkOutput& out, int head_dim, int rotary) {  // GPT-J / NORM / traditional
  out.partner.assign(static_cast<std::size_t>(head_dim), -1);
  out.pair.assign(static_cast<std::size_t>(head_dim), -1);
  for (int i = 0; i < rotary / 2; ++i) {
    out.partner[2 * i] = 2 * i + 1;
    out.partner[2 * i + 1] = 2 * i;
    out.pair[2 * i] = out.pair[2 * i + 1] = i;
  }
}
void pair_halves(FrameworkOutput& out, int head_dim, int rotary) {  // GPT-NeoX / NEOX / rotate_half
  out.partner.assign(static_cast<std::size_t>(head_dim), -1);
  out.pair.assign(static_cast<std::size_t>(head_dim), -1);
  const int half = rotary / 2;
  for (int i = 0; i < half; ++i) {
    out.partner[i] = i + half;
    out.partner[i + half] = i;
    out.pair[i] = out.pair[i + half] = i;
  }
}

// Rotates every row's pairs (first, second) = (a, b) by the angle angle(t, i), cos/sin times
// `scale`; the tail is copied. Shared by the references: only the pairing and angles differ.
FrameworkOutput rotate(FrameworkOutput out, const std::vector<float>& x, std::int64_t tokens,
                       std::int64_t heads, int head_dim,
                       const std::function<double(std::int64_t, int)>& angle, double scale,
                       bool adjacent) {
  out.y.assign(x.begin(), x.end());
  const int half = static_cast<int>(out.freq.size());
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const auto row = static_cast<std::size_t>((t * heads + h) * head_dim);
      for (int i = 0; i < half; ++i) {
        const int a = adjacent ? 2 * i : i, b = adjacent ? 2 * i + 1 : i + half;
        const double c = std::cos(angle(t, i)) * scale, s = std::sin(angle(t, i)) * scale;
        const double xa = x[row + a], xb = x[row + b];
        out.y[row + a] = xa * c - xb * s;
        out.y[row + b] = xa * s + xb * c;
      }
    }
  }
  return out;
}

// A fixed, irregular input: no symmetry a layout or sign error could hide behind.
std::vector<float> golden_input(std::int64_t tokens, std::int64_t heads, int head_dim) {
  std::vector<float> x(static_cast<std::size_t>(tokens * heads * head_dim));
  for (std::size_t j = 0; j < x.size(); ++j) {
    x[j] = static_cast<float>(std::sin(0.7 * static_cast<double>(j) + 0.3) * (1.0 + 0.1 * static_cast<double>(j % 5)));
  }
  return x;
}

// Both double computations of one rotation: the oracle forms angles in long double, the references
// in double (ggml's by a recurrence of i multiplications), so they differ by a few 2^-53 |m theta|
// radians, 1e-5 eps32 units at these positions; 0.01 units is a tight bound that still leaves room.
constexpr double kOracleUnits = 0.01;

struct Agreement {
  double worst_ratio = 0;  // worst |got - want| / bound over every element checked
  std::string where;
  int implementations = 0;
};

// Worst error over the rotary features of `got` against `want`, as a fraction of
// bound(m, theta, pair);
// the tail must be bit for bit the input.
void measure(const FrameworkOutput& want, const std::vector<float>& in,
             const std::vector<double>& got, std::int64_t heads, int head_dim,
             const std::vector<std::int64_t>& positions,
             const std::function<double(std::int64_t, double, int)>& bound, const std::string& who,
             Agreement& agreement) {
  for (std::size_t j = 0; j < got.size(); ++j) {
    const auto f = static_cast<std::size_t>(j % static_cast<std::size_t>(head_dim));
    const std::size_t row = j - f;
    const std::int64_t m = positions[j / (static_cast<std::size_t>(heads) * static_cast<std::size_t>(head_dim))];
    if (want.partner[f] < 0) {
      if (got[j] != static_cast<double>(in[j])) {
        agreement.worst_ratio = INFINITY;
        agreement.where = who + " changed tail element " + std::to_string(j);
      }
      continue;
    }
    const double pair = std::hypot(in[row + f], in[row + static_cast<std::size_t>(want.partner[f])]);
    const double units = std::abs(got[j] - want.y[j]) / (kEps32 * pair);
    const auto pair_index = static_cast<std::size_t>(want.pair[f]);
    const double ratio = units / bound(m, want.freq[pair_index], static_cast<int>(pair_index));
    if (!(ratio <= agreement.worst_ratio)) {
      agreement.worst_ratio = std::isnan(ratio) ? INFINITY : ratio;
      agreement.where = who + ", element " + std::to_string(j) + " (position " + std::to_string(m) +
                        "): got " + std::to_string(got[j]) + ", framework formula " +
                        std::to_string(want.y[j]) + ", " + std::to_string(units) + " units";
    }
  }
}

// oracle_rope against the framework formula.
Agreement oracle_agreement(const Mapped& mapped, const std::vector<float>& x, std::int64_t heads,
                           const Reference& reference) {
  const auto tokens = static_cast<std::int64_t>(mapped.positions.size());
  const FrameworkOutput want = reference(x);
  const auto got = oracle_rope(mapped.spec, x, tokens, heads, mapped.positions);
  Agreement agreement;
  measure(want, x, got, heads, mapped.spec.head_dim, mapped.positions,
          [](std::int64_t, double, int) { return kOracleUnits; }, "oracle_rope", agreement);
  return agreement;
}

// Every real implementation that supports the spec, in every angle precision it implements.
Agreement implementations_agreement(const Mapped& mapped, const std::vector<float>& x,
                                    std::int64_t heads, const Reference& reference) {
  const auto tokens = static_cast<std::int64_t>(mapped.positions.size());
  Agreement agreement;
  for (const RopeImpl* impl : rope_implementations()) {
    const auto caps = impl->capabilities();
    if (!caps.available) continue;
    std::vector<float> in = x;
    for (float& v : in) v = round_to_storage(v, caps.storage);
    const FrameworkOutput want = reference(in);
    for (const AnglePrecision angles : caps.angle_precisions) {
      RopeSpec spec = mapped.spec;
      spec.angle_precision = angles;
      if (!caps.supports(spec)) continue;
      ++agreement.implementations;
      std::vector<float> out = in;
      impl->apply(spec, HeadTensor{out, tokens, heads, spec.head_dim}, mapped.positions);
      const ErrorModel model = error_model(spec, caps.storage);
      measure(want, in, std::vector<double>(out.begin(), out.end()), heads, spec.head_dim,
              mapped.positions,
              [&](std::int64_t m, double theta, int pair) {
                return rotation_bound_units(model, m, theta, pair);
              },
              std::string(impl->id()) + " (" + std::string(to_string(angles)) + " angles)",
              agreement);
    }
  }
  return agreement;
}

void expect_framework_agrees(const Mapped& mapped, std::int64_t heads, const Reference& reference,
                             const std::string& what) {
  SCOPED_TRACE(what + ": " + describe(mapped.spec));
  const auto x = golden_input(static_cast<std::int64_t>(mapped.positions.size()), heads,
                              mapped.spec.head_dim);
  const Agreement oracle = oracle_agreement(mapped, x, heads, reference);
  EXPECT_LE(oracle.worst_ratio, 1.0) << oracle.where;
  const Agreement impls = implementations_agreement(mapped, x, heads, reference);
  EXPECT_LE(impls.worst_ratio, 1.0) << impls.where;
  EXPECT_GE(impls.implementations, 3) << "too few implementations support the mapped spec";
  ::testing::Test::RecordProperty(what, "oracle " + std::to_string(oracle.worst_ratio) +
                                            " implementations " + std::to_string(impls.worst_ratio) +
                                            " (" + std::to_string(impls.implementations) + " checked)");
}

// ================================================================================================
// HF transformers: config.head_dim, partial_rotary_factor, rope_theta, rope_scaling{rope_type, ...}
// (modeling_rope_utils.py ROPE_INIT_FUNCTIONS; apply_rotary_pos_emb with rotate_half).
struct HfConfig {
  int head_dim = 128;
  double partial_rotary_factor = 1.0;
  double rope_theta = 10000.0;
  std::int64_t max_position_embeddings = 2048;
  std::string rope_type = "default";  // "default", "linear", "dynamic", "yarn", "longrope", "llama3"
  double factor = 1.0;
  std::optional<std::int64_t> original_max_position_embeddings;
  std::optional<double> attention_factor;
  double beta_fast = 32, beta_slow = 1, low_freq_factor = 1, high_freq_factor = 4;
  std::optional<double> mscale, mscale_all_dim;  // yarn: DeepSeek-V2/V3's keys
};

// HF -> ropecheck: rotate_half pairs the halves (half_split); dim = int(head_dim * partial_rotary_factor)
// is the rotary_dim (the rest passes through); rope_type names the scaling kind.
RopeSpec map_hf(const HfConfig& c) {
  RopeSpec spec;
  spec.head_dim = c.head_dim;
  spec.rotary_dim = static_cast<int>(c.head_dim * c.partial_rotary_factor);
  spec.base = c.rope_theta;
  spec.layout = Layout::half_split;
  RopeScaling& s = spec.scaling;
  if (c.rope_type == "default") return spec;
  if (c.rope_type == "linear") s.kind = ScalingKind::linear;
  else if (c.rope_type == "dynamic") s.kind = ScalingKind::dynamic_ntk;
  else if (c.rope_type == "yarn") s.kind = ScalingKind::yarn;
  else if (c.rope_type == "longrope") s.kind = ScalingKind::longrope;
  else if (c.rope_type == "llama3") s.kind = ScalingKind::llama3;
  else throw InvalidInput("unknown rope_type " + c.rope_type);
  s.factor = c.factor;
  s.original_max_position = c.original_max_position_embeddings.value_or(c.max_position_embeddings);
  s.attention_factor = c.attention_factor;
  if (s.kind == ScalingKind::yarn) {
    s.mscale = c.mscale;
    s.mscale_all_dim = c.mscale_all_dim;
  }
  s.beta_fast = c.beta_fast;
  s.beta_slow = c.beta_slow;
  s.low_freq_factor = c.low_freq_factor;
  s.high_freq_factor = c.high_freq_factor;
  return spec;
}

// HF yarn, from _compute_yarn_parameters: find_correction_dim / find_correction_range (floor, ceil,
// clamped to [0, dim - 1]), linear_ramp_factor over dim // 2, inv_freq = interpolation *
// (1 - extrapolation_factor) + extrapolation * extrapolation_factor; cos, sin = cat(freqs, freqs)
// .cos()/.sin() * attention_scaling; q_embed = q * cos + rotate_half(q) * sin on the first dim
// features.
FrameworkOutput hf_yarn(const HfConfig& c, const std::vector<float>& x,
                        const std::vector<std::int64_t>& position_ids, std::int64_t heads) {
  const int dim = static_cast<int>(c.head_dim * c.partial_rotary_factor);
  const double base = c.rope_theta;
  const double L = static_cast<double>(c.original_max_position_embeddings.value_or(c.max_position_embeddings));
  const auto correction_dim = [&](double rotations) {
    return dim * std::log(L / (rotations * 2 * kPi)) / (2 * std::log(base));
  };
  const double low = std::max(std::floor(correction_dim(c.beta_fast)), 0.0);
  double high = std::min(std::ceil(correction_dim(c.beta_slow)), dim - 1.0);
  if (low == high) high += 0.001;
  FrameworkOutput out;
  for (int i = 0; i < dim / 2; ++i) {
    const double pos_freq = std::pow(base, static_cast<double>(2 * i) / dim);
    const double extrapolation = 1.0 / pos_freq, interpolation = 1.0 / (c.factor * pos_freq);
    const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
    const double extrapolation_factor = 1.0 - ramp;
    out.freq.push_back(interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor);
  }
  // attention_factor, else get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) when
  // both are truthy, else get_mscale(factor); get_mscale(s, m) = 0.1 m ln(s) + 1 for s > 1.
  const auto get_mscale = [&](double m) {
    return c.factor <= 1 ? 1.0 : 0.1 * m * std::log(c.factor) + 1.0;
  };
  double attention_scaling = get_mscale(1.0);
  if (c.mscale.value_or(0) != 0 && c.mscale_all_dim.value_or(0) != 0) {
    attention_scaling = get_mscale(*c.mscale) / get_mscale(*c.mscale_all_dim);
  }
  attention_scaling = c.attention_factor.value_or(attention_scaling);
  pair_halves(out, c.head_dim, dim);
  const std::vector<double> inv_freq = out.freq;
  return rotate(std::move(out), x, static_cast<std::int64_t>(position_ids.size()), heads, c.head_dim,
                [&](std::int64_t t, int i) {
                  return static_cast<double>(position_ids[t]) * inv_freq[static_cast<std::size_t>(i)];
                },
                attention_scaling, /*adjacent=*/false);
}

TEST(FrameworkConventions, HfTransformersYarnPartialRotary) {
  // A Phi-like partial rotary head (dim = int(16 * 0.5) = 8) with YaRN factor 4 over 4096:
  // correction dims floor(1.31) = 1, ceil(2.81) = 3, so pairs 0, 1 keep theta, 2 is half
  // blended, 3 is divided by 4 -- every region of the ramp in four pairs.
  HfConfig c;
  c.head_dim = 16;
  c.partial_rotary_factor = 0.5;
  c.rope_theta = 10000.0;
  c.max_position_embeddings = 4096;
  c.rope_type = "yarn";
  c.factor = 4.0;
  const std::vector<std::int64_t> position_ids = {0, 1, 5, 300, 4095, 9000};
  const std::int64_t heads = 2;
  const Mapped mapped{map_hf(c), position_ids};
  EXPECT_EQ(mapped.spec.rotary_dim, 8);
  expect_framework_agrees(mapped, heads,
                          [&](const std::vector<float>& x) { return hf_yarn(c, x, position_ids, heads); },
                          "hf yarn partial_rotary_factor 0.5");
}

// DeepSeek's rotary part as HF runs it (q_pe and k_pe permuted to half-split, rotate_half):
// qk_rope_head_dim 64, factor 40 = max_position_embeddings 163840 / 4096, and unequal mscale keys
// so that the ratio, not 0.1 ln 40 + 1, is what must agree.
TEST(FrameworkConventions, HfTransformersYarnDeepSeekMscale) {
  HfConfig c;
  c.head_dim = 64;
  c.rope_theta = 10000.0;
  c.max_position_embeddings = 163840;
  c.original_max_position_embeddings = 4096;
  c.rope_type = "yarn";
  c.factor = 40.0;
  c.mscale = 1.0;
  c.mscale_all_dim = 0.707;
  const std::vector<std::int64_t> position_ids = {0, 1, 4095, 4096, 65536, 163839};
  const std::int64_t heads = 2;
  const Mapped mapped{map_hf(c), position_ids};
  EXPECT_EQ(mapped.spec.scaling.mscale, 1.0);
  EXPECT_EQ(mapped.spec.scaling.mscale_all_dim, 0.707);
  expect_framework_agrees(mapped, heads,
                          [&](const std::vector<float>& x) { return hf_yarn(c, x, position_ids, heads); },
                          "hf yarn deepseek mscale 1 / mscale_all_dim 0.707");
}

TEST(FrameworkConventions, HfRopeTypeNames) {
  const std::pair<const char*, ScalingKind> names[] = {
      {"default", ScalingKind::none}, {"linear", ScalingKind::linear},
      {"dynamic", ScalingKind::dynamic_ntk}, {"yarn", ScalingKind::yarn},
      {"longrope", ScalingKind::longrope}, {"llama3", ScalingKind::llama3}};
  for (const auto& [name, kind] : names) {
    HfConfig c;
    c.rope_type = name;
    EXPECT_EQ(map_hf(c).scaling.kind, kind) << name;
  }
  HfConfig c;
  c.head_dim = 80;
  c.partial_rotary_factor = 0.4;  // GPT-NeoX-20B / Phi-2 style: int(80 * 0.4) = 32
  EXPECT_EQ(map_hf(c).rotary_dim, 32);
}

// ================================================================================================
// llama.cpp / ggml: ggml_rope_ext(ctx, a, pos, freq_factors, n_dims, mode, n_ctx_orig, freq_base,
// freq_scale, ext_factor, attn_factor, beta_fast, beta_slow) (ggml-cpu ops.cpp: ggml_rope_cache_init,
// rope_yarn, rope_yarn_ramp, ggml_rope_yarn_corr_dims, rotate_pairs).
constexpr int kGgmlRopeNorm = 0;  // GGML_ROPE_TYPE_NORMAL
constexpr int kGgmlRopeNeox = 2;  // GGML_ROPE_TYPE_NEOX

struct GgmlRope {
  int n_dims = 0;
  int mode = kGgmlRopeNorm;
  int n_ctx_orig = 0;
  double freq_base = 10000, freq_scale = 1, ext_factor = 0, attn_factor = 1;
  double beta_fast = 32, beta_slow = 1;
};

// ggml -> ropecheck: NORM rotates adjacent pairs (interleaved), NEOX the halves of the first
// n_dims (half_split); n_dims is rotary_dim (the rest of ne0 is copied); freq_scale is
// 1 / factor; ext_factor 1 turns YaRN's ramp on (original context n_ctx_orig, beta_fast/slow),
// and then cos/sin carry attn_factor * (1 + 0.1 ln(1 / freq_scale)); with ext_factor 0 it is
// linear scaling with cos/sin times attn_factor. A fractional ext_factor (a partial ramp) has no
// ropecheck spec.
RopeSpec map_ggml(const GgmlRope& g, int head_dim) {
  if (g.mode != kGgmlRopeNorm && g.mode != kGgmlRopeNeox) throw InvalidInput("mode not NORM or NEOX");
  if (g.ext_factor != 0 && g.ext_factor != 1) throw InvalidInput("ext_factor other than 0 or 1");
  RopeSpec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = g.n_dims;
  spec.base = g.freq_base;
  spec.layout = g.mode == kGgmlRopeNeox ? Layout::half_split : Layout::interleaved;
  RopeScaling& s = spec.scaling;
  const double factor = 1.0 / g.freq_scale;
  if (g.ext_factor == 1) {
    s.kind = ScalingKind::yarn;
    s.factor = factor;
    s.original_max_position = g.n_ctx_orig;
    s.beta_fast = g.beta_fast;
    s.beta_slow = g.beta_slow;
    if (g.attn_factor != 1) s.attention_factor = g.attn_factor * (1.0 + 0.1 * std::log(factor));
  } else {
    if (factor != 1) {
      s.kind = ScalingKind::linear;
      s.factor = factor;
    }
    if (g.attn_factor != 1) s.attention_factor = g.attn_factor;
  }
  return spec;
}

// The ggml CPU loop in double: theta_scale = base^(-2/n_dims), theta starts at the position and is
// multiplied by theta_scale per pair; rope_yarn blends freq_scale * theta and theta by
// ramp_mix = (1 - clamp((i0/2 - low) / max(0.001, high - low), 0, 1)) * ext_factor and, with
// ext_factor on, scales mscale by 1 + 0.1 ln(1 / freq_scale); rotate_pairs: NORM (i0, i0 + 1),
// NEOX (i0/2, i0/2 + n_dims/2); the features past n_dims are copied.
FrameworkOutput ggml_rope(const GgmlRope& g, int head_dim, const std::vector<float>& x,
                          const std::vector<std::int64_t>& pos, std::int64_t heads) {
  const double theta_scale = std::pow(g.freq_base, -2.0 / g.n_dims);
  const auto corr_dim = [&](double n_rot) {
    return g.n_dims * std::log(g.n_ctx_orig / (n_rot * 2 * kPi)) / (2 * std::log(g.freq_base));
  };
  double corr[2] = {0, 0};
  if (g.ext_factor != 0) {
    corr[0] = std::max(0.0, std::floor(corr_dim(g.beta_fast)));
    corr[1] = std::min(g.n_dims - 1.0, std::ceil(corr_dim(g.beta_slow)));
  }
  const double mscale = g.ext_factor != 0 ? g.attn_factor * (1.0 + 0.1 * std::log(1.0 / g.freq_scale))
                                          : g.attn_factor;
  // angle(p, i0/2) as ggml_rope_cache_init forms it for position p.
  const auto cache_angle = [&](double p, int pair) {
    double theta = p;
    for (int k = 0; k < pair; ++k) theta *= theta_scale;
    const double theta_extrap = theta, theta_interp = g.freq_scale * theta_extrap;
    if (g.ext_factor == 0) return theta_interp;
    const double y = (pair - corr[0]) / std::max(0.001, corr[1] - corr[0]);
    const double ramp_mix = (1.0 - std::clamp(y, 0.0, 1.0)) * g.ext_factor;
    return theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
  };
  FrameworkOutput out;
  for (int i = 0; i < g.n_dims / 2; ++i) out.freq.push_back(cache_angle(1.0, i));
  if (g.mode == kGgmlRopeNeox) pair_halves(out, head_dim, g.n_dims);
  else pair_adjacent(out, head_dim, g.n_dims);
  return rotate(std::move(out), x, static_cast<std::int64_t>(pos.size()), heads, head_dim,
                [&](std::int64_t t, int i) { return cache_angle(static_cast<double>(pos[t]), i); },
                mscale, g.mode == kGgmlRopeNorm);
}

GgmlRope ggml_neox_yarn() {
  // A Qwen2-style NEOX head with partial rotary (n_dims 8 of 12) and YaRN factor 4 over 4096,
  // attn_factor 0.9: corr dims 1 and 3 as in the HF case above.
  GgmlRope g;
  g.n_dims = 8;
  g.mode = kGgmlRopeNeox;
  g.n_ctx_orig = 4096;
  g.freq_base = 10000;
  g.freq_scale = 0.25;
  g.ext_factor = 1;
  g.attn_factor = 0.9;
  return g;
}

TEST(FrameworkConventions, GgmlNeoxYarn) {
  const GgmlRope g = ggml_neox_yarn();
  const int head_dim = 12;
  const std::vector<std::int64_t> pos = {0, 3, 17, 1000, 4095, 6000};
  const Mapped mapped{map_ggml(g, head_dim), pos};
  EXPECT_EQ(mapped.spec.layout, Layout::half_split);
  EXPECT_EQ(mapped.spec.scaling.kind, ScalingKind::yarn);
  expect_framework_agrees(mapped, 3,
                          [&](const std::vector<float>& x) { return ggml_rope(g, head_dim, x, pos, 3); },
                          "ggml NEOX yarn");
}

TEST(FrameworkConventions, GgmlNormLinear) {
  // LLaMA-style NORM (adjacent pairs), full rotary, freq_scale 0.5 (linear factor 2), no YaRN.
  GgmlRope g;
  g.n_dims = 16;
  g.mode = kGgmlRopeNorm;
  g.freq_base = 500000;
  g.freq_scale = 0.5;
  const std::vector<std::int64_t> pos = {0, 1, 2, 511, 8191};
  const Mapped mapped{map_ggml(g, 16), pos};
  EXPECT_EQ(mapped.spec.layout, Layout::interleaved);
  EXPECT_EQ(mapped.spec.scaling.kind, ScalingKind::linear);
  EXPECT_EQ(mapped.spec.scaling.factor, 2.0);
  expect_framework_agrees(mapped, 2,
                          [&](const std::vector<float>& x) { return ggml_rope(g, 16, x, pos, 2); },
                          "ggml NORM linear");
}

// The negative test: the mapping with NORM and NEOX swapped must be caught.
TEST(FrameworkConventions, SwappedNormNeoxIsCaught) {
  const GgmlRope g = ggml_neox_yarn();
  const int head_dim = 12;
  const std::vector<std::int64_t> pos = {0, 3, 17, 1000, 4095, 6000};
  Mapped wrong{map_ggml(g, head_dim), pos};
  wrong.spec.layout = Layout::interleaved;  // as if NEOX meant adjacent pairs
  const auto x = golden_input(static_cast<std::int64_t>(pos.size()), 3, head_dim);
  const Reference reference = [&](const std::vector<float>& in) { return ggml_rope(g, head_dim, in, pos, 3); };
  const Agreement oracle = oracle_agreement(wrong, x, 3, reference);
  EXPECT_GT(oracle.worst_ratio, 1e3) << "a swapped layout went unnoticed";
  const Agreement impls = implementations_agreement(wrong, x, 3, reference);
  EXPECT_GT(impls.worst_ratio, 1.0) << "a swapped layout went unnoticed";
  ::testing::Test::RecordProperty("swapped layout", "oracle " + std::to_string(oracle.worst_ratio) +
                                                        " implementations " + std::to_string(impls.worst_ratio));
  // And the fractional ext_factor ggml allows has no spec.
  GgmlRope partial = g;
  partial.ext_factor = 0.5;
  EXPECT_THROW(map_ggml(partial, head_dim), InvalidInput);
}

// ================================================================================================
// vLLM: get_rope(head_size, rotary_dim, max_position, base, is_neox_style, rope_scaling)
// (RotaryEmbedding: inv_freq = 1 / base ** (arange(0, rotary_dim, 2) / rotary_dim); forward_native
// splits query[..., :rotary_dim] and passes the rest; _apply_rotary_emb: neox halves, GPT-J
// x[..., ::2] / x[..., 1::2]; LinearScalingRotaryEmbedding: cache positions t / scaling_factor).
struct VllmRope {
  int head_size = 0, rotary_dim = 0;
  double base = 10000;
  bool is_neox_style = true;
  double linear_scaling_factor = 1;  // rope_scaling {"rope_type": "linear", "factor": ...}
};

RopeSpec map_vllm(const VllmRope& v) {
  RopeSpec spec;
  spec.head_dim = v.head_size;
  spec.rotary_dim = v.rotary_dim;
  spec.base = v.base;
  spec.layout = v.is_neox_style ? Layout::half_split : Layout::interleaved;
  if (v.linear_scaling_factor != 1) {
    spec.scaling.kind = ScalingKind::linear;
    spec.scaling.factor = v.linear_scaling_factor;
  }
  return spec;
}

FrameworkOutput vllm_rope(const VllmRope& v, const std::vector<float>& x,
                          const std::vector<std::int64_t>& positions, std::int64_t heads) {
  FrameworkOutput out;
  for (int k = 0; k < v.rotary_dim; k += 2) out.freq.push_back(1.0 / std::pow(v.base, static_cast<double>(k) / v.rotary_dim));
  if (v.is_neox_style) pair_halves(out, v.head_size, v.rotary_dim);
  else pair_adjacent(out, v.head_size, v.rotary_dim);
  const std::vector<double> inv_freq = out.freq;
  // The cache row for position p holds cos/sin of (p / scaling_factor) * inv_freq.
  for (double& f : out.freq) f /= v.linear_scaling_factor;  // the effective frequency, for the bound
  return rotate(std::move(out), x, static_cast<std::int64_t>(positions.size()), heads, v.head_size,
                [&](std::int64_t t, int i) {
                  return static_cast<double>(positions[t]) / v.linear_scaling_factor * inv_freq[i];
                },
                1.0, !v.is_neox_style);
}

TEST(FrameworkConventions, VllmGptjStylePartialLinear) {
  // is_neox_style=False (GPT-J, ChatGLM style), rotary_dim 8 of head_size 16, linear factor 2.
  VllmRope v{16, 8, 10000, false, 2.0};
  const std::vector<std::int64_t> positions = {5, 0, 77, 2048, 3};  // vLLM takes any position ids
  const Mapped mapped{map_vllm(v), positions};
  EXPECT_EQ(mapped.spec.layout, Layout::interleaved);
  expect_framework_agrees(mapped, 2,
                          [&](const std::vector<float>& x) { return vllm_rope(v, x, positions, 2); },
                          "vllm gptj partial linear");
}

TEST(FrameworkConventions, VllmNeoxStyle) {
  VllmRope v{8, 8, 1000000, true, 1.0};
  const std::vector<std::int64_t> positions = {0, 1, 2, 3, 100000};
  const Mapped mapped{map_vllm(v), positions};
  EXPECT_EQ(mapped.spec.layout, Layout::half_split);
  expect_framework_agrees(mapped, 4,
                          [&](const std::vector<float>& x) { return vllm_rope(v, x, positions, 4); },
                          "vllm neox");
}

// ================================================================================================
// MLX: mx.fast.rope(a, dims, *, traditional, base, scale, offset) / nn.RoPE (MLX's own reference
// rope_orig in python/tests/test_fast.py: positions = (offset + arange(T)) * scale,
// inv_freqs = exp(-arange(dims/2) * ln(base) / (dims/2)); traditional rotates x[..., :dims:2] with
// x[..., 1:dims:2], otherwise x[..., :dims/2] with x[..., dims/2:dims]; the rest unchanged).
struct MlxRope {
  int dims = 0;
  bool traditional = false;
  double base = 10000, scale = 1;
  std::int64_t offset = 0;
};

// MLX -> ropecheck: traditional -> interleaved, else half_split; dims is rotary_dim; token t is at
// position offset + t; scale multiplies positions, i.e. linear scaling with factor 1 / scale (MLX
// allows scale > 1 too, which ropecheck's factor >= 1 does not).
Mapped map_mlx(const MlxRope& m, int head_dim, std::int64_t tokens) {
  Mapped mapped;
  mapped.spec.head_dim = head_dim;
  mapped.spec.rotary_dim = m.dims;
  mapped.spec.base = m.base;
  mapped.spec.layout = m.traditional ? Layout::interleaved : Layout::half_split;
  if (m.scale != 1) {
    mapped.spec.scaling.kind = ScalingKind::linear;
    mapped.spec.scaling.factor = 1.0 / m.scale;
  }
  for (std::int64_t t = 0; t < tokens; ++t) mapped.positions.push_back(m.offset + t);
  return mapped;
}

FrameworkOutput mlx_rope(const MlxRope& m, int head_dim, const std::vector<float>& x,
                         std::int64_t tokens, std::int64_t heads) {
  const int half = m.dims / 2;
  FrameworkOutput out;
  for (int i = 0; i < half; ++i) out.freq.push_back(std::exp(-i * (std::log(m.base) / half)));
  if (m.traditional) pair_adjacent(out, head_dim, m.dims);
  else pair_halves(out, head_dim, m.dims);
  const std::vector<double> inv_freqs = out.freq;
  for (double& f : out.freq) f *= m.scale;
  return rotate(std::move(out), x, tokens, heads, head_dim,
                [&](std::int64_t t, int i) {
                  return static_cast<double>(m.offset + t) * m.scale * inv_freqs[i];
                },
                1.0, m.traditional);
}

TEST(FrameworkConventions, MlxTraditionalScaleOffset) {
  MlxRope m{8, true, 500000, 0.25, 37};  // dims 8 of a 12-feature head, KV cache offset 37
  const std::int64_t tokens = 4, heads = 2;
  const Mapped mapped = map_mlx(m, 12, tokens);
  EXPECT_EQ(mapped.positions, (std::vector<std::int64_t>{37, 38, 39, 40}));
  EXPECT_EQ(mapped.spec.scaling.factor, 4.0);
  expect_framework_agrees(mapped, heads,
                          [&](const std::vector<float>& x) { return mlx_rope(m, 12, x, tokens, heads); },
                          "mlx traditional scale 0.25 offset 37");
}

TEST(FrameworkConventions, MlxDefaultHalves) {
  MlxRope m{16, false, 10000, 1.0, 1000};
  const std::int64_t tokens = 3, heads = 2;
  const Mapped mapped = map_mlx(m, 16, tokens);
  EXPECT_EQ(mapped.spec.layout, Layout::half_split);
  expect_framework_agrees(mapped, heads,
                          [&](const std::vector<float>& x) { return mlx_rope(m, 16, x, tokens, heads); },
                          "mlx default");
}

// ================================================================================================
// FlashAttention: flash_attn.layers.rotary.apply_rotary_emb(x, cos, sin, interleaved=False,
// seqlen_offsets=0) with cos/sin of shape (seqlen, rotary_dim / 2) from RotaryEmbedding(dim, base)
// (inv_freq = 1 / base ** (arange(0, dim, 2) / dim)); apply_rotary_emb_torch: ro_dim =
// 2 * cos.shape[-1], rotate_half(x[..., :ro_dim], interleaved) -- halves by default (GPT-NeoX),
// even/odd with interleaved=True (GPT-J) -- and x[..., ro_dim:] unchanged; token t of a sequence
// reads cos/sin row t + seqlen_offsets.
struct FlashRotary {
  int rotary_dim = 0;  // 2 * cos.shape[-1]
  double base = 10000;
  bool interleaved = false;
  std::int64_t seqlen_offsets = 0;
};

Mapped map_flash(const FlashRotary& f, int head_dim, std::int64_t seqlen) {
  Mapped mapped;
  mapped.spec.head_dim = head_dim;
  mapped.spec.rotary_dim = f.rotary_dim;
  mapped.spec.base = f.base;
  mapped.spec.layout = f.interleaved ? Layout::interleaved : Layout::half_split;
  for (std::int64_t t = 0; t < seqlen; ++t) mapped.positions.push_back(t + f.seqlen_offsets);
  return mapped;
}

FrameworkOutput flash_rope(const FlashRotary& f, int head_dim, const std::vector<float>& x,
                           std::int64_t seqlen, std::int64_t heads) {
  FrameworkOutput out;
  for (int k = 0; k < f.rotary_dim; k += 2) out.freq.push_back(1.0 / std::pow(f.base, static_cast<double>(k) / f.rotary_dim));
  if (f.interleaved) pair_adjacent(out, head_dim, f.rotary_dim);
  else pair_halves(out, head_dim, f.rotary_dim);
  const std::vector<double> inv_freq = out.freq;
  return rotate(std::move(out), x, seqlen, heads, head_dim,
                [&](std::int64_t t, int i) {
                  return static_cast<double>(t + f.seqlen_offsets) * inv_freq[i];
                },
                1.0, f.interleaved);
}

TEST(FrameworkConventions, FlashAttentionDefaultAndInterleaved) {
  for (const bool interleaved : {false, true}) {
    FlashRotary f{8, 10000, interleaved, 250};  // rotary 8 of a 16-feature head, offset 250
    const std::int64_t seqlen = 5, heads = 2;
    const Mapped mapped = map_flash(f, 16, seqlen);
    EXPECT_EQ(mapped.spec.layout, interleaved ? Layout::interleaved : Layout::half_split);
    expect_framework_agrees(mapped, heads,
                            [&](const std::vector<float>& x) { return flash_rope(f, 16, x, seqlen, heads); },
                            std::string("flash-attn interleaved=") + (interleaved ? "True" : "False"));
  }
}

}  // namespace
}  // namespace ropecheck
