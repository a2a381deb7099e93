// Generators for the property suite (see generators.h).
#include "properties/harness/generators.h"

#include <algorithm>
#include <cmath>

#include "properties/harness/axis_generators.h"

namespace ropecheck {
namespace {

// An exponent in [lo, hi] (lo <= 0 <= hi) that shrinks to 0: a sign, and a magnitude uniform
// over that side's range, so counterexamples shrink towards 1.0f.
rc::Gen<int> exponent_near_zero(int lo, int hi) {
  return rc::gen::apply(
      [=](int u, bool negative) {
        const std::int64_t side = negative ? -lo : hi;
        return static_cast<int>((u * (side + 1)) >> 20) * (negative ? -1 : 1);
      },
      rc::gen::inRange(0, 1 << 20), rc::gen::arbitrary<bool>());
}

}  // namespace

rc::Gen<float> finite_float(int min_exponent, int max_exponent) {
  const auto nonzero = rc::gen::apply(
      [](int fraction, int exponent, bool negative) {
        const float mantissa = 1.0f + static_cast<float>(fraction) * 0x1p-23f;
        const float value = std::ldexp(mantissa, exponent);
        return negative ? -value : value;
      },
      rc::gen::inRange(0, 1 << 23), exponent_near_zero(min_exponent, max_exponent),
      rc::gen::arbitrary<bool>());
  return rc::gen::weightedOneOf<float>(
      {{12, nonzero}, {1, rc::gen::just(0.0f)}, {1, rc::gen::just(-0.0f)}});
}

ExponentRange storage_exponents(StorageType storage) {
  if (storage == StorageType::fp16) return {kFp16MinExponent, kFp16MaxExponent};
  return {kMinFiniteExponent, kMaxFiniteExponent};
}

rc::Gen<float> storage_float(StorageType storage) {
  const auto [lo, hi] = storage_exponents(storage);
  return finite_float(lo, hi);
}

namespace {

// Head dims from real models (GPT-2 64, 72, Phi-2 80, 96, Llama 128, Gemma 256) a third of the time,
// else any even value. Built with apply, not oneOf: RapidCheck never shrinks across oneOf's
// alternatives, so a failure found on a model dim would stay at 64..256; here `pick` shrinks to
// 0 and the any-even component towards the smallest dim.
rc::Gen<int> head_dim(int at_least) {
  auto model = rc::gen::suchThat(rc::gen::element(64, 72, 80, 96, 128, 256),
                                 [=](int d) { return d >= at_least; });
  auto any_even = rc::gen::map(rc::gen::inRange(at_least / 2, 129), [](int h) { return 2 * h; });
  return rc::gen::apply([](int pick, int m, int any) { return pick == 2 ? m : any; },
                        rc::gen::inRange(0, 3), model, any_even);
}

// The same below a declared maximum (a plugin's max_head_dim under 256): model dims and even
// values up to it. A separate function so that the usual generator's sequences stay as they are.
rc::Gen<int> head_dim(int at_least, int at_most) {
  if (at_most >= 256) return head_dim(at_least);
  std::vector<int> models;
  for (const int d : {64, 72, 80, 96, 128}) {
    if (d >= at_least && d <= at_most) models.push_back(d);
  }
  auto any_even =
      rc::gen::map(rc::gen::inRange(at_least / 2, at_most / 2 + 1), [](int h) { return 2 * h; });
  if (models.empty()) return any_even;
  return rc::gen::apply([](int pick, int m, int any) { return pick == 2 ? m : any; },
                        rc::gen::inRange(0, 3), rc::gen::elementOf(models), any_even);
}

// Bases log-uniform in [100, 1e7], with the usual ones (1e4 Llama 2, 5e5 Llama 3, 1e6 Qwen, 1e7
// long-context models).
rc::Gen<double> base() {
  auto usual = rc::gen::element(10000.0, 500000.0, 1000000.0, 10000000.0);
  auto log_uniform = rc::gen::map(rc::gen::inRange(0, 1 << 20), [](int u) {
    return std::pow(10.0, 2.0 + 5.0 * static_cast<double>(u) / (1 << 20));
  });
  return rc::gen::weightedOneOf<double>({{1, usual}, {2, log_uniform}});  // shrinks to 1e4
}

}  // namespace

namespace {

// Log-uniform in [lo, hi], shrinking to lo.
rc::Gen<double> log_uniform(double lo, double hi) {
  return rc::gen::map(rc::gen::inRange(0, 1 << 20), [=](int u) {
    return lo * std::pow(hi / lo, static_cast<double>(u) / (1 << 20));
  });
}

// Factors as checkpoints use them (2 Code Llama/NTK, 4 YaRN Qwen, 8 Llama 3, 32 and 40
// YaRN/DeepSeek) and anything in between.
rc::Gen<double> scaling_factor() {
  return rc::gen::weightedOneOf<double>(
      {{1, rc::gen::element(2.0, 4.0, 8.0, 16.0, 32.0, 40.0)}, {1, log_uniform(1.0, 64.0)}});
}

rc::Gen<std::int64_t> original_max_position() {
  return rc::gen::weightedOneOf<std::int64_t>(
      {{1, rc::gen::element<std::int64_t>(2048, 4096, 8192, 32768)},
       {1, rc::gen::inRange<std::int64_t>(16, std::int64_t{1} << 17)}});
}

// The current length of a dynamic spec: at or below L (no scaling) or above it (up to 2^21).
rc::Gen<std::int64_t> sequence_length(std::int64_t original_max) {
  return rc::gen::weightedOneOf<std::int64_t>(
      {{1, rc::gen::inRange<std::int64_t>(1, original_max + 1)},
       {2, rc::gen::inRange<std::int64_t>(original_max + 1, std::int64_t{1} << 21)}});
}

rc::Gen<std::vector<double>> per_pair_factors(int rotary_dim, double lo, double hi) {
  return rc::gen::container<std::vector<double>>(static_cast<std::size_t>(rotary_dim / 2),
                                                 log_uniform(lo, hi));
}

}  // namespace

rc::Gen<RopeScaling> scaling_of(ScalingKind kind, int rotary_dim) {
  if (kind == ScalingKind::none) return rc::gen::just(RopeScaling{});
  return rc::gen::exec([=] {
    RopeScaling s;
    s.kind = kind;
    s.factor = *scaling_factor();
    if (kind != ScalingKind::linear && kind != ScalingKind::ntk) {
      s.original_max_position = *original_max_position();
    }
    switch (kind) {
      case ScalingKind::dynamic_ntk:
        s.sequence_length = *sequence_length(s.original_max_position);
        break;
      case ScalingKind::yarn:
        if (*rc::gen::inRange(0, 3) == 2) {  // non-default betas a third of the time
          s.beta_slow = *log_uniform(0.25, 4.0);
          s.beta_fast = s.beta_slow * *log_uniform(1.5, 64.0);
        }
        s.truncate = *rc::gen::inRange(0, 4) != 3;
        break;
      case ScalingKind::llama3:
        if (*rc::gen::inRange(0, 3) == 2) {
          s.low_freq_factor = *log_uniform(0.25, 4.0);
          s.high_freq_factor = s.low_freq_factor * *log_uniform(1.25, 16.0);
        }
        break;
      case ScalingKind::longrope:
        s.sequence_length = *sequence_length(s.original_max_position);
        s.short_factor = *per_pair_factors(rotary_dim, 1.0, 2.0);
        s.long_factor = *per_pair_factors(rotary_dim, 1.0, 64.0);
        break;
      default:
        break;
    }
    if (*rc::gen::inRange(0, 8) == 7) s.attention_factor = *log_uniform(0.5, 2.0);
    // DeepSeek's mscale pair a quarter of the time, drawn last so that every other draw stays
    // what it was: both (their ratio), one alone or a zero (HF's default factor then).
    if (kind == ScalingKind::yarn && *rc::gen::inRange(0, 4) == 3) {
      const auto mscale = rc::gen::weightedOneOf<double>(
          {{2, rc::gen::element(0.707, 1.0)}, {2, log_uniform(0.1, 2.0)}, {1, rc::gen::just(0.0)}});
      const int which = *rc::gen::inRange(0, 4);  // 0, 1: both; 2: mscale alone; 3: mscale_all_dim
      if (which != 3) s.mscale = *mscale;
      if (which != 2) s.mscale_all_dim = *mscale;
    }
    return s;
  });
}

rc::Gen<RopeScaling> rope_scaling(const RopeCapabilities& caps, int rotary_dim) {
  std::vector<ScalingKind> scaled;  // the kinds it implements besides none
  for (const ScalingKind kind : caps.scaling_kinds) {
    if (kind != ScalingKind::none) scaled.push_back(kind);
  }
  if (scaled.empty()) return rc::gen::just(RopeScaling{});
  // none half the time (shrinks to it), each method it implements otherwise.
  const auto kind = rc::gen::weightedOneOf<ScalingKind>(
      {{6, rc::gen::just(ScalingKind::none)}, {6, rc::gen::elementOf(scaled)}});
  return rc::gen::mapcat(kind, [=](ScalingKind k) { return scaling_of(k, rotary_dim); });
}

rc::Gen<RopeSpec> rope_spec(const RopeCapabilities& caps, Rotary rotary) {
  const int min_head_dim = rotary == Rotary::partial ? 4 : 2;
  return rc::gen::mapcat(head_dim(min_head_dim, caps.max_head_dim), [=](int d) {
    rc::Gen<int> rotary_dim = rc::gen::just(d);
    if (rotary == Rotary::partial) {
      rotary_dim = rc::gen::map(rc::gen::inRange(1, d / 2), [](int h) { return 2 * h; });
    } else if (rotary == Rotary::any && caps.partial_rotary) {
      // Only where partial rotary is declared: a kernel without it (a plugin with
      // partial_rotary = 0, Meta's LLaMA form) is never handed rotary_dim < head_dim.
      rotary_dim = rc::gen::weightedOneOf<int>(
          {{2, rc::gen::just(d)},
           {1, rc::gen::map(rc::gen::inRange(1, d / 2 + 1), [](int h) { return 2 * h; })}});
    }
    return rc::gen::mapcat(rotary_dim, [=](int r) { return rope_spec_at(caps, d, r); });
  });
}

rc::Gen<RopeSpec> rope_spec_at(const RopeCapabilities& caps, int head_dim, int rotary_dim) {
  const auto spec = rc::gen::apply(
      [head_dim, rotary_dim](double b, Layout layout, AnglePrecision precision, RopeScaling scaling) {
        return RopeSpec{head_dim, rotary_dim, b, layout, precision, std::move(scaling), {}};
      },
      base(), rc::gen::elementOf(caps.layouts), rc::gen::elementOf(caps.angle_precisions),
      rope_scaling(caps, rotary_dim));
  // The position axes last, as the scaling allows (axis_generators.h).
  return rc::gen::mapcat(spec, [=](RopeSpec s) {
    return rc::gen::map(position_axes(caps, rotary_dim, s.scaling.kind != ScalingKind::none),
                        [s](PositionAxes axes) {
                          RopeSpec with = s;
                          with.axes = axes;
                          return with;
                        });
  });
}

rc::Gen<std::int64_t> power_of_two_neighbour(int max_exponent) {
  return rc::gen::apply(
      [](int k, int side) {
        const std::int64_t power = std::int64_t{1} << k;
        return std::max<std::int64_t>(1, power + (side == 0 ? 0 : side == 1 ? -1 : 1));
      },
      rc::gen::inRange(0, max_exponent + 1), rc::gen::inRange(0, 3));
}

std::int64_t position_limit(const RopeCapabilities& caps) {
  return std::max<std::int64_t>(1, std::min(kMaxGeneratedPosition, caps.max_position / 4));
}

rc::Gen<std::int64_t> signed_position(std::int64_t limit) {
  // Magnitude and sign apart, so that shrinking goes to 0 rather than to -limit.
  return rc::gen::apply([](std::int64_t magnitude, bool negative) { return negative ? -magnitude : magnitude; },
                        rc::gen::inRange<std::int64_t>(0, limit + 1), rc::gen::arbitrary<bool>());
}

rc::Gen<std::vector<std::int64_t>> position_ids(std::size_t count, std::int64_t limit) {
  using Positions = std::vector<std::int64_t>;
  const auto n = static_cast<std::int64_t>(count);
  // A run of n contiguous positions needs n - 1 of room.
  const std::int64_t max = std::max(limit, n - 1);
  // Decoding: a contiguous run starting at an offset (prefix caching, the KV cache).
  auto contiguous = rc::gen::map(rc::gen::inRange<std::int64_t>(0, max - n + 1),
                                 [n](std::int64_t offset) {
                                   Positions p(static_cast<std::size_t>(n));
                                   for (std::int64_t t = 0; t < n; ++t) p[static_cast<std::size_t>(t)] = offset + t;
                                   return p;
                                 });
  // Any values: sorted ones have gaps (packed sequences), repeats (tree decoding), negatives.
  auto values = rc::gen::container<Positions>(count, signed_position(max));
  auto sorted = rc::gen::map(values, [](Positions p) {
    std::sort(p.begin(), p.end());
    return p;
  });
  auto repeated = rc::gen::map(rc::gen::inRange<std::int64_t>(0, max + 1), [count](std::int64_t m) {
    return Positions(count, m);
  });
  auto non_negative = rc::gen::container<Positions>(count, rc::gen::inRange<std::int64_t>(0, max + 1));
  // Simplest first (shrinking goes towards the first alternative): one position repeated.
  return rc::gen::weightedOneOf<Positions>(
      {{1, repeated}, {2, contiguous}, {2, sorted}, {2, non_negative}, {1, values}});
}

void showValue(const RopeSpec& spec, std::ostream& os) { os << describe(spec); }
void showValue(const RopeScaling& scaling, std::ostream& os) { os << describe(scaling); }
void showValue(ScalingKind kind, std::ostream& os) { os << to_string(kind); }
void showValue(Layout layout, std::ostream& os) { os << to_string(layout); }

}  // namespace ropecheck
