// Published reference values for every frequency-scaling method (scaling.h), worked out by hand
// from the published formulas, never from ropecheck's own output: the shared table
// (inverse_frequencies), the oracle's independent table (oracle_inverse_frequencies), the attention
// factor (both), YaRN's correction range and the (dynamic) NTK base are all held to them.
//
// Sources: HF transformers src/transformers/modeling_rope_utils.py (ROPE_INIT_FUNCTIONS:
// _compute_linear_scaling_rope_parameters, _compute_ntk_parameters, _compute_dynamic_ntk_parameters,
// _compute_yarn_parameters with find_correction_dim / find_correction_range / linear_ramp_factor and
// the default attention factor 0.1 ln(factor) + 1 or DeepSeek's mscale ratio,
// _compute_llama3_parameters, _compute_longrope_parameters); llama.cpp ggml_rope_yarn_corr_dims / rope_yarn for YaRN (the same
// correction dims and ramp, on pair index i0/2).
//
// How the numbers were computed: python3, standard library only (math), every value printed with
// '%.17g', the expressions quoted above each block. th(b, d, i) below is b**(-2*i/d), the unscaled
// frequency (HF: 1.0 / (base ** (arange(0, dim, 2) / dim))).
//
// Tolerance: relative 1e-12. The python values are the formula evaluated in double: pow within an
// ulp or two, a handful of roundings, and the exponent's rounding amplified by |ln theta| <= 15
// here, so a few times 1e-15 relative at worst; ropecheck's double table is as close, the oracle's
// long double closer. 1e-12 leaves that a margin of a hundred and still sees any error in a
// formula (a wrong index, exponent, ramp end or branch moves a value by 1e-4 relative or far more).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "core/frequency.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {
namespace {

constexpr double kRelative = 1e-12;

struct Want {
  int i;
  double theta;
};

RopeSpec spec_with(int d, double base, RopeScaling scaling) {
  return {d, d, base, Layout::interleaved, AnglePrecision::fp64, std::move(scaling), {}};
}

// Both tables, at each listed index, against the hand values.
void expect_table(const RopeSpec& spec, std::initializer_list<Want> want, const std::string& what) {
  SCOPED_TRACE(what + ": " + describe(spec));
  const auto shared = inverse_frequencies(spec);
  const auto oracle = oracle_inverse_frequencies(spec);
  ASSERT_EQ(shared.size(), static_cast<std::size_t>(spec.rotary_dim / 2));
  ASSERT_EQ(oracle.size(), shared.size());
  for (const Want& w : want) {
    const auto i = static_cast<std::size_t>(w.i);
    EXPECT_NEAR(shared[i], w.theta, kRelative * w.theta) << "inverse_frequencies, pair " << w.i;
    EXPECT_NEAR(static_cast<double>(oracle[i]), w.theta, kRelative * w.theta)
        << "oracle_inverse_frequencies, pair " << w.i;
  }
}

void expect_attention(const RopeSpec& spec, double want, const std::string& what) {
  SCOPED_TRACE(what + ": " + describe(spec));
  EXPECT_NEAR(attention_factor(spec), want, kRelative * want);
  EXPECT_NEAR(static_cast<double>(oracle_attention_factor(spec)), want, kRelative * want);
}

// --- linear (position interpolation) -----------------------------------------------------------
// HF _compute_linear_scaling_rope_parameters: inv_freq /= factor.
// d 128, base 1e4, factor 4:  th(1e4, 128, i) / 4  for i in (0, 1, 32, 63)
// (i = 32 by hand: 1e4^-1/2 / 4 = 0.0025; i = 0: 1/4.)
TEST(ScalingReference, Linear) {
  RopeScaling s;
  s.kind = ScalingKind::linear;
  s.factor = 4.0;
  const RopeSpec spec = spec_with(128, 1e4, s);
  expect_table(spec,
               {{0, 0.25}, {1, 0.21649108084001634}, {32, 0.0025000000000000001},
                {63, 2.8869549617236455e-05}},
               "linear");
  expect_attention(spec, 1.0, "linear");
}

// --- NTK-aware (static) ------------------------------------------------------------------------
// HF _compute_ntk_parameters: base' = base * factor ** (dim / (dim - 2)), then the default table.
// d 128, base 1e4, factor 4:  b = 1e4 * 4**(128/126) = 40889.942432486219;  th(b, 128, i)
// (i = 63: b^-126/128 = 1e4^-126/128 / 4, the same as linear's last pair: NTK keeps the highest
// frequency and interpolates the lowest exactly like linear.)
TEST(ScalingReference, Ntk) {
  RopeScaling s;
  s.kind = ScalingKind::ntk;
  s.factor = 4.0;
  const RopeSpec spec = spec_with(128, 1e4, s);
  EXPECT_NEAR(ntk_base(spec), 40889.942432486219, kRelative * 40889.942432486219);
  expect_table(spec,
               {{0, 1.0}, {1, 0.84711718515120682}, {32, 0.0049452898406803667},
                {63, 2.8869549617236452e-05}},
               "ntk");
  expect_attention(spec, 1.0, "ntk");
}

// --- dynamic NTK -------------------------------------------------------------------------------
// HF _compute_dynamic_ntk_parameters: seq_len = seq_len if seq_len > max_position_embeddings else
// max_position_embeddings; base' = base * ((factor * seq_len / max_pos) - (factor - 1)) ** (d/(d-2)).
// d 128, base 1e4, factor 2, L 4096, L' = sequence_length:
//   L' = 4095, 4096: unchanged, b = 1e4              th(1e4, 128, i)
//   L' = 4097: b = 1e4 * (2*4097/4096 - 1)**(128/126) = 10004.9603366797
//   L' = 8192: b = 1e4 * 3**(128/126)                   = 30527.736748806699
//   each th(b, 128, i) for i in (0, 1, 32, 63)
TEST(ScalingReference, DynamicNtkAroundTheOriginalContext) {
  struct Case {
    std::int64_t sequence_length;
    double base;
    double theta1, theta32, theta63;
  };
  const Case cases[] = {
      {4095, 1e4, 0.86596432336006535, 0.01, 0.00011547819846894582},
      {4096, 1e4, 0.86596432336006535, 0.01, 0.00011547819846894582},
      {4097, 10004.9603366797, 0.86595761337106403, 0.0099975207539641613, 0.00011542184014856078},
      {8192, 30527.736748806699, 0.85099429134121618, 0.0057233815083812378, 3.8492732822981941e-05},
  };
  for (const Case& c : cases) {
    RopeScaling s;
    s.kind = ScalingKind::dynamic_ntk;
    s.factor = 2.0;
    s.original_max_position = 4096;
    s.sequence_length = c.sequence_length;
    const RopeSpec spec = spec_with(128, 1e4, s);
    const std::string what = "dynamic_ntk L'=" + std::to_string(c.sequence_length);
    EXPECT_NEAR(ntk_base(spec), c.base, kRelative * c.base) << what;
    expect_table(spec, {{0, 1.0}, {1, c.theta1}, {32, c.theta32}, {63, c.theta63}}, what);
    expect_attention(spec, 1.0, what);
  }
}

// --- YaRN ----------------------------------------------------------------------------------------
// HF _compute_yarn_parameters / llama.cpp ggml_rope_yarn_corr_dims + rope_yarn:
//   c(r) = d * ln(L / (r * 2 pi)) / (2 ln base)            (find_correction_dim)
//   low = max(floor(c(beta_fast)), 0), high = min(ceil(c(beta_slow)), d - 1)   (find_correction_range)
//   ramp_i = clamp((i - low) / (high - low), 0, 1)          (linear_ramp_factor over dim // 2 pairs)
//   theta_i = th/factor * ramp_i + th * (1 - ramp_i)        (extrapolation factor = 1 - ramp)
//   attention factor 0.1 ln(factor) + 1                      (get_mscale; ggml: 1 + 0.1 ln(1/freq_scale))
// python: c = lambda r: d*math.log(L/(r*2*math.pi))/(2*math.log(b));
//         r = lambda i: min(max((i-lo)/(hi-lo), 0.0), 1.0);  th(b,d,i)/f*r(i) + th(b,d,i)*(1-r(i))

// Defaults (HF): factor 4, L 4096, beta_fast 32, beta_slow 1; d 128, base 1e4.
//   c(32) = 20.944481620636051 -> 20,  c(1) = 45.026881273754547 -> 46;  attention 1.1386294361119891
//   below the range (i <= 20) theta is unscaled, above it (i >= 46) divided by 4, between blended.
TEST(ScalingReference, YarnDefaults) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = 4.0;
  s.original_max_position = 4096;
  const RopeSpec spec = spec_with(128, 1e4, s);
  const auto range = yarn_correction_range(spec);
  EXPECT_EQ(range.low, 20.0);
  EXPECT_EQ(range.high, 46.0);
  expect_table(spec,
               {{0, 1.0}, {17, 0.086596432336006529}, {20, 0.056234132519034911},
                {21, 0.047292038501684786}, {30, 0.009488517882700576},
                {46, 0.00033338035804083102}, {47, 0.00028869549617236453},
                {63, 2.8869549617236455e-05}},
               "yarn defaults");
  expect_attention(spec, 1.1386294361119891, "yarn defaults");
  // An explicit attention_factor (HF rope_scaling["attention_factor"]) replaces the default.
  RopeSpec overridden = spec;
  overridden.scaling.attention_factor = 0.75;
  expect_attention(overridden, 0.75, "yarn attention_factor override");
}

// The same without truncation (HF truncate=False, gpt-oss): the raw correction dims
// 20.944481620636051 and 45.026881273754547 are the ramp's ends.
TEST(ScalingReference, YarnUntruncated) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = 4.0;
  s.original_max_position = 4096;
  s.truncate = false;
  const RopeSpec spec = spec_with(128, 1e4, s);
  const auto range = yarn_correction_range(spec);
  EXPECT_NEAR(range.low, 20.944481620636051, kRelative * 20.944481620636051);
  EXPECT_NEAR(range.high, 45.026881273754547, kRelative * 45.026881273754547);
  expect_table(spec,
               {{0, 1.0}, {20, 0.056234132519034911}, {21, 0.048612555193470151},
                {30, 0.0095744612367552363}, {45, 0.00038627080494978231},
                {46, 0.00033338035804083102}, {63, 2.8869549617236455e-05}},
               "yarn untruncated");
}

// DeepSeek-V2's rope config: qk_rope_head_dim 64, rope_theta 1e4, factor 40,
// original_max_position_embeddings 4096, beta_fast 32, beta_slow 1.
//   c(32) = 10.472240810318025 -> 10,  c(1) = 22.513440636877274 -> 23
//   default attention factor 0.1 ln 40 + 1 = 1.3688879454113936. (DeepSeek's config also sets
//   mscale = mscale_all_dim = 0.707, which HF turns into the ratio below: YarnDeepSeekV3Mscale.)
TEST(ScalingReference, YarnDeepSeekV2) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = 40.0;
  s.original_max_position = 4096;
  const RopeSpec spec = spec_with(64, 1e4, s);
  const auto range = yarn_correction_range(spec);
  EXPECT_EQ(range.low, 10.0);
  EXPECT_EQ(range.high, 23.0);
  expect_table(spec,
               {{0, 1.0}, {10, 0.056234132519034911}, {11, 0.039006926567143857},
                {15, 0.0083345089510207769}, {20, 0.00079056941504209463},
                {23, 3.3338035804083099e-05}, {31, 3.3338035804083097e-06}},
               "yarn deepseek-v2");
  expect_attention(spec, 1.3688879454113936, "yarn deepseek-v2");
}

// DeepSeek-V3's rope_scaling: the same table as V2's (d 64, base 1e4, factor 40, L 4096, beta
// 32/1) with mscale = mscale_all_dim = 1. HF _compute_yarn_parameters: an explicit
// attention_factor wins; else, when mscale and mscale_all_dim are both truthy,
// get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim); else get_mscale(factor);
// get_mscale(s, m) = 0.1 * m * ln(s) + 1 for s > 1, else 1. In python3 (math):
//   gm = lambda s, m: 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0
//   gm(40, 1.0) / gm(40, 1.0)   = 1 (exactly: x / x)
//   gm(40, 1.0) / gm(40, 0.707) = 1.0857263992561355
//   gm(40, 0.707) / gm(40, 1.0) = 0.92104235531633993
//   gm(40, 1)                   = 1.3688879454113936   (one key alone, or a zero: the default)
// Pairs: th(1e4, 64, i) / 40 * r + th(1e4, 64, i) * (1 - r), r = clamp((i - 10) / 13, 0, 1),
// i in (0, 9, 10, 11, 16, 22, 23, 31).
TEST(ScalingReference, YarnDeepSeekV3Mscale) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = 40.0;
  s.original_max_position = 4096;
  s.beta_fast = 32.0;
  s.beta_slow = 1.0;
  s.mscale = 1.0;
  s.mscale_all_dim = 1.0;
  RopeSpec spec = spec_with(64, 1e4, s);
  expect_table(spec,
               {{0, 1.0}, {9, 0.074989420933245579}, {10, 0.056234132519034911},
                {11, 0.039006926567143857}, {16, 0.0054999999999999997},
                {22, 0.00017782794100389219}, {23, 3.3338035804083099e-05},
                {31, 3.3338035804083097e-06}},
               "yarn deepseek-v3");
  EXPECT_EQ(attention_factor(spec), 1.0) << "mscale = mscale_all_dim: exactly 1";
  EXPECT_EQ(static_cast<double>(oracle_attention_factor(spec)), 1.0);
  spec.scaling.mscale_all_dim = 0.707;
  expect_attention(spec, 1.0857263992561355, "mscale 1 over mscale_all_dim 0.707");
  spec.scaling.mscale = 0.707;
  spec.scaling.mscale_all_dim = 1.0;
  expect_attention(spec, 0.92104235531633993, "mscale 0.707 over mscale_all_dim 1");
  // HF's precedence: the explicit attention_factor first.
  spec.scaling.attention_factor = 0.75;
  expect_attention(spec, 0.75, "attention_factor over mscale");
  spec.scaling.attention_factor.reset();
  // Either key alone, or either zero (Python's truthiness), leaves the default get_mscale(40).
  for (const auto& [mscale, mscale_all_dim] :
       {std::pair<std::optional<double>, std::optional<double>>{0.707, std::nullopt},
        {std::nullopt, 0.707}, {0.0, 0.707}, {0.707, 0.0}}) {
    spec.scaling.mscale = mscale;
    spec.scaling.mscale_all_dim = mscale_all_dim;
    expect_attention(spec, 1.3688879454113936, "one mscale key alone or zero");
  }
  // No stretch (factor 1): get_mscale is 1 whatever m.
  spec.scaling.factor = 1.0;
  spec.scaling.mscale = 1.0;
  spec.scaling.mscale_all_dim = 0.707;
  expect_attention(spec, 1.0, "factor 1");
}

// --- Llama 3 -------------------------------------------------------------------------------------
// HF _compute_llama3_parameters, Llama 3.1's config: factor 8, low_freq_factor 1,
// high_freq_factor 4, original_max_position_embeddings 8192, rope_theta 500000, d 128.
//   w = 2 pi / th; w < 8192/4 = 2048: th;  w > 8192/1: th / 8;
//   else s = (8192 / w - 1) / (4 - 1), (1 - s) * th / 8 + s * th
// Pairs 0..28 are high frequency (w(28) = 1956.497), 29..34 smooth (s(29) = 0.8036,
// s(34) = 0.0745), 35..63 low frequency (w(35) = 8218.718).
TEST(ScalingReference, Llama31) {
  RopeScaling s;
  s.kind = ScalingKind::llama3;
  s.factor = 8.0;
  s.original_max_position = 8192;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  const RopeSpec spec = spec_with(128, 500000.0, s);
  expect_table(spec,
               {{0, 1.0}, {1, 0.81461723385654472}, {28, 0.0032114459947525909},
                {29, 0.0021665707635033591}, {32, 0.00052484616099295468},
                {34, 0.00017850781276799641}, {35, 9.5562123539646833e-05},
                {63, 3.0689259889145111e-07}},
               "llama3");
  expect_attention(spec, 1.0, "llama3");
}

// --- LongRoPE ------------------------------------------------------------------------------------
// HF _compute_longrope_parameters: inv_freq = 1 / (ext * base ** (arange(0, d, 2) / d)), ext =
// long_factor when the sequence is longer than original_max_position_embeddings, else
// short_factor; attention factor sqrt(1 + ln(factor) / ln(original_max_position_embeddings)).
// A Phi-3-like config, shortened to d 16 (8 factors), base 1e4, L 4096, factor 32 (131072 / 4096):
//   short = [1, 1.02, 1.05, 1.1, 1.2, 1.5, 2, 3], long = [1, 1.1, 1.5, 2.5, 5, 10, 20, 40]
//   th(1e4, 16, i) / ext[i];  attention sqrt(1 + ln 32 / ln 4096) = sqrt(17/12) = 1.1902380714238083
TEST(ScalingReference, LongRopeAtTheOriginalContextAndPastIt) {
  RopeScaling s;
  s.kind = ScalingKind::longrope;
  s.factor = 32.0;
  s.original_max_position = 4096;
  s.short_factor = {1.0, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0};
  s.long_factor = {1.0, 1.1, 1.5, 2.5, 5.0, 10.0, 20.0, 40.0};
  s.sequence_length = 4096;  // not longer than L: short factors
  const RopeSpec short_spec = spec_with(16, 1e4, s);
  expect_table(short_spec,
               {{0, 1.0}, {1, 0.31002722158513524}, {2, 0.095238095238095233},
                {3, 0.028747978728803445}, {4, 0.0083333333333333332},
                {5, 0.0021081851067789197}, {6, 0.00050000000000000001},
                {7, 0.00010540925533894598}},
               "longrope L'=4096 (short)");
  s.sequence_length = 4097;  // longer: long factors
  const RopeSpec long_spec = spec_with(16, 1e4, s);
  expect_table(long_spec,
               {{0, 1.0}, {1, 0.28747978728803447}, {2, 0.066666666666666666},
                {3, 0.012649110640673516}, {4, 0.002}, {5, 0.00031622776601683794},
                {6, 5.0000000000000002e-05}, {7, 7.9056941504209488e-06}},
               "longrope L'=4097 (long)");
  // The attention factor depends on factor and L only, not on which array is in use.
  expect_attention(short_spec, 1.1902380714238083, "longrope short");
  expect_attention(long_spec, 1.1902380714238083, "longrope long");
}

// HF: `if factor <= 1.0: attention_factor = 1.0`, before any logarithm. Factor 1 with L = 1 is
// valid here (factor >= 1, L >= 1), and the formula there would be sqrt(1 + ln 1 / ln 1) = NaN.
TEST(ScalingReference, LongRopeAtFactorOneHasAttentionFactorOne) {
  RopeScaling s;
  s.kind = ScalingKind::longrope;
  s.factor = 1.0;
  s.short_factor = {1.0, 1.0, 1.0, 1.0};
  s.long_factor = {1.0, 1.0, 1.0, 1.0};
  for (std::int64_t original : {1, 4096}) {
    s.original_max_position = original;
    expect_attention(spec_with(8, 1e4, s), 1.0, "longrope factor 1, L " + std::to_string(original));
  }
}

}  // namespace
}  // namespace ropecheck
