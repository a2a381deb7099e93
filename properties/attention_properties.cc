// The attention properties (seeds 000, 001, 003), on every attention implementation: agreement
// with the double reference within a bound derived from fp32 accumulation (and K and V kept as
// the implementation declares), permutation equivariance without positions, RoPE breaking it,
// RoPE invariance to a common shift, the average under equal scores, causality.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include "properties/catalogue.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "impls/registry.h"
#include "core/isa.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

struct Problem {
  AttentionShape shape;
  std::vector<float> q, k, v;
  int threads = 1;  // the team that shares the (head, row block) tasks
};

// Values on a 1/64 grid in [-4, 4]: activation-sized, exact in fp32.
std::vector<float> pick_values(std::size_t n, const char* name) {
  return *rc::gen::container<std::vector<float>>(
              n, rc::gen::map(rc::gen::inRange(-256, 257), [](int x) { return static_cast<float>(x) / 64; }))
              .as(name);
}

Problem pick_problem(bool causal_any) {
  Problem p;
  p.shape.tokens = *rc::gen::inRange<std::int64_t>(1, 33).as("tokens");
  p.shape.kv_heads = *rc::gen::inRange<std::int64_t>(1, 3).as("kv_heads");
  p.shape.q_heads = p.shape.kv_heads * *rc::gen::inRange<std::int64_t>(1, 3).as("q heads per kv head");
  p.shape.head_dim = *rc::gen::element(2, 6, 16, 64, 128).as("head_dim");
  p.shape.causal = causal_any ? *rc::gen::arbitrary<bool>().as("causal") : false;
  p.threads = pick_call_threads().count;
  const auto d = static_cast<std::size_t>(p.shape.head_dim);
  p.q = pick_values(static_cast<std::size_t>(p.shape.tokens * p.shape.q_heads) * d, "q");
  p.k = pick_values(static_cast<std::size_t>(p.shape.tokens * p.shape.kv_heads) * d, "k");
  p.v = pick_values(static_cast<std::size_t>(p.shape.tokens * p.shape.kv_heads) * d, "v");
  return p;
}

// Bound on |O - O_exact| per output element, from the error model, for an attention computed in
// fp32 on K and V kept in `kv` (fp32: as given; fp16: each element rounded once, dk and dv below,
// core/tolerance.h storage_rounding_error):
//   S = Q K^T * scale in fp32:  |dS_ij| <= gamma_d * scale * sum_c |q_ic| (|k_jc| + dk_jc) + u |S_ij|
//                                         + scale * sum_c |q_ic| dk_jc
//   softmax (max-subtracted):   P~_ij = P_ij (1 + e_ij),
//     |e_ij| <= 2 max_j |dS_ij| + u |S_ij - max| + 2u (expf) + gamma_T (sum) + 2u (1/sum, *)
//   O = P~ V~ in fp32:          |dO_ic| <= sum_j P_ij (|v_jc| (|e_ij| + gamma_T (1 + |e_ij|))
//                                                     + dv_jc (1 + |e_ij|) (1 + gamma_T))
// plus u |O_ic| for the output's rounding. The double reference is within u |O_ic| of exact.
// (P~ V~ - P V = P~ dV + (P~ - P) V; the sum's roundings, gamma_T of sum P~ |V~|.)
std::vector<double> attention_bound(const Problem& p, const std::vector<float>& reference, StorageType kv) {
  const auto& s = p.shape;
  const auto d = static_cast<std::size_t>(s.head_dim);
  const double scale = 1 / std::sqrt(static_cast<double>(s.head_dim));
  std::vector<double> bound(reference.size());
  for (std::int64_t h = 0; h < s.q_heads; ++h) {
    const std::int64_t kvh = h / (s.q_heads / s.kv_heads);
    for (std::int64_t i = 0; i < s.tokens; ++i) {
      const std::int64_t visible = s.causal ? i + 1 : s.tokens;
      std::vector<double> score(static_cast<std::size_t>(visible));
      double max_ds = 0;
      for (std::int64_t j = 0; j < visible; ++j) {
        double dot = 0, abs_dot = 0, stored = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double a = p.q[static_cast<std::size_t>(i * s.q_heads + h) * d + c];
          const double b = p.k[static_cast<std::size_t>(j * s.kv_heads + kvh) * d + c];
          dot += a * b;
          abs_dot += std::abs(a * b);
          stored += std::abs(a) * storage_rounding_error(kv, b);
        }
        score[static_cast<std::size_t>(j)] = dot * scale;
        max_ds = std::max(max_ds, gamma32(static_cast<double>(d)) * scale * (abs_dot + stored) +
                                      kUnitRoundoff32 * std::abs(dot * scale) + scale * stored);
      }
      const double max = *std::max_element(score.begin(), score.end());
      double sum = 0;
      for (double x : score) sum += std::exp(x - max);
      const double g = gamma32(static_cast<double>(visible));
      for (std::size_t c = 0; c < d; ++c) {
        double b = 0;
        for (std::int64_t j = 0; j < visible; ++j) {
          const double pij = std::exp(score[static_cast<std::size_t>(j)] - max) / sum;
          const double e = 2 * max_ds + kUnitRoundoff32 * (max - score[static_cast<std::size_t>(j)]) + 4 * kUnitRoundoff32 + g;
          const double vjc = p.v[static_cast<std::size_t>(j * s.kv_heads + kvh) * d + c];
          b += pij * (std::abs(vjc) * (e + g * (1 + e)) + storage_rounding_error(kv, vjc) * (1 + e) * (1 + g));
        }
        const std::size_t at = static_cast<std::size_t>(i * s.q_heads + h) * d + c;
        bound[at] = b + 2 * kUnitRoundoff32 * std::abs(reference[at]);
      }
    }
  }
  return bound;
}

// The units results are reported in: the bound of the storage the subject keeps K and V in.
std::string bound_units(const AttentionImpl& impl) {
  return impl.kv_storage() == StorageType::fp32 ? "fp32 bound"
                                                : fmt::format("{} K,V bound", to_string(impl.kv_storage()));
}

std::vector<float> attend(const AttentionImpl& impl, const Problem& p, const RopeSpec* rope = nullptr,
                          std::span<const std::int64_t> positions = {}) {
  std::vector<float> out(p.q.size());
  impl.run(p.shape, rope, positions, p.q, p.k, p.v, out, p.threads);
  return out;
}

Problem permuted(const Problem& p, const std::vector<std::int64_t>& order) {
  Problem out = p;
  const auto q_row = static_cast<std::size_t>(p.shape.q_heads * p.shape.head_dim);
  const auto kv_row = static_cast<std::size_t>(p.shape.kv_heads * p.shape.head_dim);
  for (std::size_t t = 0; t < order.size(); ++t) {
    const auto from = static_cast<std::size_t>(order[t]);
    std::copy_n(p.q.begin() + static_cast<std::ptrdiff_t>(from * q_row), q_row, out.q.begin() + static_cast<std::ptrdiff_t>(t * q_row));
    std::copy_n(p.k.begin() + static_cast<std::ptrdiff_t>(from * kv_row), kv_row, out.k.begin() + static_cast<std::ptrdiff_t>(t * kv_row));
    std::copy_n(p.v.begin() + static_cast<std::ptrdiff_t>(from * kv_row), kv_row, out.v.begin() + static_cast<std::ptrdiff_t>(t * kv_row));
  }
  return out;
}

// The first output of the subject on p farther from attention_naive's than attention_bound allows,
// with its values; none when every output is within its bound. Each output up to it is observed in
// `tracker`.
struct ReferenceMiss {
  std::size_t output;
  float got, reference;
  double diff, bound;
};
std::optional<ReferenceMiss> miss_against_reference(const Subject& subject, const Problem& p, ErrorTracker& tracker) {
  const auto got = attend(*subject.attention, p);
  const auto reference = attend(*find_attention("attention_naive/scalar"), p);
  const auto bound = attention_bound(p, reference, subject.attention->kv_storage());
  for (std::size_t j = 0; j < got.size(); ++j) {
    const double diff = std::abs(static_cast<double>(got[j]) - reference[j]);
    tracker.observe(diff, bound[j]);
    if (!(diff <= bound[j])) return ReferenceMiss{j, got[j], reference[j], diff, bound[j]};
  }
  return std::nullopt;
}

PropertyResult matches_reference(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const CallThreadsInForce team(config.threads);  // attention's team sizes drawn up to it
  return check_property(subject, config, bound_units(*subject.attention), tracker, [&] {
    const Problem p = pick_problem(true);
    if (const auto miss = miss_against_reference(subject, p, tracker)) {
      RC_FAIL(fmt::format("output {} = {:.9g}, reference {:.9g}: |diff| {:.3g} > bound {:.3g}", miss->output,
                          miss->got, miss->reference, miss->diff, miss->bound));
    }
  });
}

// With RoPE (fp64 angles, either layout, contiguous positions from an offset): the implementation
// on the unrotated problem against the double reference on q and k rotated by the dispatched
// fast kernel, what a separate RoPE pass gives. Beyond the fp32 bound of that rotated problem,
// the two sides' rotations: each rotated pair is within kNormBoundUnits eps32 |pair| of exact,
// so the sides' pairs differ by D |pair|, D = 2 kNormBoundUnits eps32 (times 1 + D for the
// rotated norms), each score by Delta_i <= scale sum_p |q_p||k_p| (2D + D^2)(1 + D)^2 at most,
// and each output, a convex combination of v rows whose weights move by a factor within
// exp(+-2 Delta_i), by (exp(2 Delta_i) - 1) max|v|. The factor 1 + gamma_d on Delta_i covers the
// fp32 bound's own dependence on which side's rotated inputs it is evaluated on.
PropertyResult rope_matches_reference(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const CallThreadsInForce team(config.threads);  // attention's team sizes drawn up to it
  return check_property(subject, config, bound_units(*subject.attention), tracker, [&] {
    const Problem p = pick_problem(true);
    const auto& s = p.shape;
    const RopeSpec spec{s.head_dim, s.head_dim, 10000.0,
                        *rc::gen::element(Layout::interleaved, Layout::half_split).as("layout"),
                        AnglePrecision::fp64, {}, {}};
    std::vector<std::int64_t> positions(static_cast<std::size_t>(s.tokens));
    std::iota(positions.begin(), positions.end(), *rc::gen::inRange<std::int64_t>(0, 1 << 20).as("first position"));
    Problem rotated = p;
    const RopeImpl& kernel = *find_rope("kernel/" + std::string(to_string(dispatched_isa())));
    kernel.apply(spec, HeadTensor{rotated.q, s.tokens, s.q_heads, s.head_dim},
                 HeadTensor{rotated.k, s.tokens, s.kv_heads, s.head_dim}, positions);
    const auto got = attend(*subject.attention, p, &spec, positions);
    const auto reference = attend(*find_attention("attention_naive/scalar"), rotated);
    const auto fp32 = attention_bound(rotated, reference, subject.attention->kv_storage());
    double max_v = 0;
    for (float x : p.v) max_v = std::max(max_v, static_cast<double>(std::abs(x)));
    const double scale = 1 / std::sqrt(static_cast<double>(s.head_dim));
    const double dd = 2 * kNormBoundUnits * kEps32;
    const double per_score = (2 * dd + dd * dd) * (1 + dd) * (1 + dd) * (1 + gamma32(s.head_dim));
    const auto d = static_cast<std::size_t>(s.head_dim);
    const auto pair_norm = [&](const std::vector<float>& x, std::size_t row, std::size_t i) {
      const std::size_t a = spec.layout == Layout::interleaved ? 2 * i : i;
      const std::size_t b = spec.layout == Layout::interleaved ? 2 * i + 1 : i + d / 2;
      return std::hypot(static_cast<double>(x[row * d + a]), static_cast<double>(x[row * d + b]));
    };
    for (std::int64_t i = 0; i < s.tokens; ++i) {
      for (std::int64_t h = 0; h < s.q_heads; ++h) {
        const auto qrow = static_cast<std::size_t>(i * s.q_heads + h);
        const std::int64_t visible = s.causal ? i + 1 : s.tokens;
        double delta = 0;
        for (std::int64_t j = 0; j < visible; ++j) {
          const auto krow = static_cast<std::size_t>(j * s.kv_heads + h / (s.q_heads / s.kv_heads));
          double sum = 0;
          for (std::size_t pair = 0; pair < d / 2; ++pair) sum += pair_norm(p.q, qrow, pair) * pair_norm(p.k, krow, pair);
          delta = std::max(delta, scale * sum * per_score);
        }
        for (std::size_t c = 0; c < d; ++c) {
          const std::size_t at = qrow * d + c;
          const double allowed = fp32[at] + std::expm1(2 * delta) * max_v;
          const double diff = std::abs(static_cast<double>(got[at]) - reference[at]);
          tracker.observe(diff, allowed);
          if (!(diff <= allowed)) {
            RC_FAIL(fmt::format("{} tokens, position {} (token {}, head {}): output {} = {:.9g}, "
                                "reference on separately rotated q, k {:.9g}: |diff| {:.3g} > {:.3g}",
                                s.tokens, positions[static_cast<std::size_t>(i)], i, h, at, got[at],
                                reference[at], diff, allowed));
          }
        }
      }
    }
  });
}

PropertyResult equivariance_without_positions(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const CallThreadsInForce team(config.threads);  // attention's team sizes drawn up to it
  return check_property(subject, config, bound_units(*subject.attention), tracker, [&] {
    // Seed 000: without positions, reordering the tokens reorders the outputs (full mask).
    const Problem p = pick_problem(false);
    std::vector<std::int64_t> order(static_cast<std::size_t>(p.shape.tokens));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(*rc::gen::arbitrary<unsigned>().as("token order's seed")));
    const Problem moved = permuted(p, order);
    const auto out = attend(*subject.attention, p), out_moved = attend(*subject.attention, moved);
    const auto bound = attention_bound(p, out, subject.attention->kv_storage());
    const auto row = static_cast<std::size_t>(p.shape.q_heads * p.shape.head_dim);
    for (std::size_t t = 0; t < order.size(); ++t) {
      for (std::size_t c = 0; c < row; ++c) {
        const std::size_t at = static_cast<std::size_t>(order[t]) * row + c;
        const double diff = std::abs(static_cast<double>(out_moved[t * row + c]) - out[at]);
        tracker.observe(diff, 2 * bound[at]);  // each run within its bound of the same truth
        if (!(diff <= 2 * bound[at])) {
          RC_FAIL(fmt::format("token {} moved to slot {}: output {} differs by {:.3g}", order[t], t, c, diff));
        }
      }
    }
  });
}

PropertyResult rope_breaks_equivariance(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const CallThreadsInForce team(config.threads);  // attention's team sizes drawn up to it
  RunConfig once = config;
  once.cases = 1;  // a fixed, non-degenerate problem: "this is awesome" vs "this awesome is"
  return check_property(subject, once, "relative gap", tracker, [&] {
    Problem p;
    p.shape = {6, 2, 2, 8, false};
    const std::size_t n = 6 * 2 * 8;
    for (std::size_t j = 0; j < n; ++j) {
      p.q.push_back(std::sin(0.7f * static_cast<float>(j) + 0.3f));
      p.k.push_back(std::cos(1.3f * static_cast<float>(j)));
      p.v.push_back(std::sin(0.1f * static_cast<float>(j * j % 97)));
    }
    const std::vector<std::int64_t> slots = {0, 1, 2, 3, 4, 5}, order = {3, 0, 5, 1, 4, 2};
    const RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
    const auto out = attend(*subject.attention, p, &spec, slots);
    const auto out_moved = attend(*subject.attention, permuted(p, order), &spec, slots);
    double gap = 0, scale = 0;
    for (std::size_t t = 0; t < 6; ++t) {
      for (std::size_t c = 0; c < 16; ++c) {
        gap = std::max(gap, std::abs(static_cast<double>(out_moved[t * 16 + c]) - out[static_cast<std::size_t>(order[t]) * 16 + c]));
        scale = std::max(scale, std::abs(static_cast<double>(out[t * 16 + c])));
      }
    }
    // Positions change the scores by O(1) here; fp32 error is O(1e-6): 1e-3 separates them.
    constexpr double kMinGap = 1e-3;
    tracker.observe(kMinGap, gap / scale);
    if (gap / scale < kMinGap) {
      RC_FAIL(fmt::format("with RoPE, reordering the tokens only reordered the outputs (relative "
                          "gap {:.3g}): the positions never reached attention", gap / scale));
    }
  });
}

PropertyResult rope_shift_invariance(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const CallThreadsInForce team(config.threads);  // attention's team sizes drawn up to it
  return check_property(subject, config, bound_units(*subject.attention), tracker, [&] {
    // softmax(R_m q . R_n k) depends on n - m only: shifting every position by c changes nothing
    // beyond rounding. Each rotated pair is within kNormBoundUnits eps32 |pair| of exact (fp64
    // angles), so each score within scale * sum|q||k| * 2 kNormBoundUnits eps32 per side; the two
    // runs' scores differ by <= Delta_i, outputs by <= 2 Delta_i max|v|, plus each run's bound
    // (an F16 KV cache's on each run's rotated k, which the two runs round differently).
    const Problem p = pick_problem(true);
    const auto& s = p.shape;
    const RopeSpec spec{s.head_dim, s.head_dim, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
    std::vector<std::int64_t> positions(static_cast<std::size_t>(s.tokens));
    std::iota(positions.begin(), positions.end(), *rc::gen::inRange<std::int64_t>(0, 1 << 20).as("first position"));
    std::vector<std::int64_t> shifted(positions);
    const auto c = *rc::gen::inRange<std::int64_t>(-(1 << 20), 1 << 20).as("shift c");
    for (auto& m : shifted) m += c;
    const auto out_a = attend(*subject.attention, p, &spec, positions);
    const auto out_b = attend(*subject.attention, p, &spec, shifted);
    const auto fp32 = attention_bound(p, out_a, StorageType::fp32);  // on the unrotated problem: same |q||k| sums
    // What keeping K and V narrower adds to each run: its bound on its rotated q and k, less the
    // fp32 part already counted (the storage terms are the only difference).
    std::vector<double> stored(fp32.size(), 0.0);
    if (subject.attention->kv_storage() != StorageType::fp32) {
      const RopeImpl& kernel = *find_rope("kernel/" + std::string(to_string(dispatched_isa())));
      for (const auto* run : {&positions, &shifted}) {
        Problem rotated = p;
        kernel.apply(spec, HeadTensor{rotated.q, s.tokens, s.q_heads, s.head_dim},
                     HeadTensor{rotated.k, s.tokens, s.kv_heads, s.head_dim}, *run);
        const auto& out = run == &positions ? out_a : out_b;
        const auto with = attention_bound(rotated, out, subject.attention->kv_storage());
        const auto without = attention_bound(rotated, out, StorageType::fp32);
        for (std::size_t j = 0; j < stored.size(); ++j) stored[j] += with[j] - without[j];
      }
    }
    const double scale = 1 / std::sqrt(static_cast<double>(s.head_dim));
    double max_v = 0;
    for (float x : p.v) max_v = std::max(max_v, static_cast<double>(std::abs(x)));
    const auto d = static_cast<std::size_t>(s.head_dim);
    for (std::int64_t i = 0; i < s.tokens; ++i) {
      for (std::int64_t h = 0; h < s.q_heads; ++h) {
        double delta = 0;
        for (std::int64_t j = 0; j < s.tokens; ++j) {
          double abs_dot = 0;
          for (std::size_t x = 0; x < d; ++x) {
            abs_dot += std::abs(static_cast<double>(p.q[static_cast<std::size_t>(i * s.q_heads + h) * d + x]) *
                                p.k[static_cast<std::size_t>(j * s.kv_heads + h / (s.q_heads / s.kv_heads)) * d + x]);
          }
          delta = std::max(delta, 2 * scale * abs_dot * 2 * kNormBoundUnits * kEps32 * (1 + kEps32));
        }
        for (std::size_t x = 0; x < d; ++x) {
          const std::size_t at = static_cast<std::size_t>(i * s.q_heads + h) * d + x;
          // fp32 bounds of each run: the rotated problem's |q||k| sums are those of the unrotated
          // one up to rounding, so the unrotated bound is used, doubled for the two runs.
          const double allowed = 2 * delta * max_v + 2 * fp32[at] + stored[at] +
                                 kUnitRoundoff32 * (std::abs(out_a[at]) + std::abs(out_b[at]));
          const double diff = std::abs(static_cast<double>(out_a[at]) - out_b[at]);
          tracker.observe(diff, allowed);
          if (!(diff <= allowed)) {
            RC_FAIL(fmt::format("shift {}: output {} changed by {:.3g} > {:.3g}", c, at, diff, allowed));
          }
        }
      }
    }
  });
}

// With q = 0 every score is exactly 0, whatever K is rounded to: the softmax is uniform and output
// i is the average of the values it sees, so the error is the P V sum's alone. The values are
// same-signed, 1 to 4 in magnitude, where a long sum's roundings all go one way: an accumulator
// narrower than the declared K and V shows here, where random scores' own bound would hide it.
// Up to 64 tokens (a sum of 64 values of up to 4 passes 2^8: fp16's spacing there is 2^-2). The
// values repeat a drawn pattern of 1 to 8, so that a failure shrinks in a few steps, not one per
// element of v (thousands of calls); k meets only q = 0 and takes the same values.
PropertyResult equal_scores_average(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const CallThreadsInForce team(config.threads);  // attention's team sizes drawn up to it
  return check_property(subject, config, bound_units(*subject.attention), tracker, [&] {
    Problem p;
    p.shape.tokens = *rc::gen::inRange<std::int64_t>(1, 65).as("tokens");
    p.shape.kv_heads = *rc::gen::inRange<std::int64_t>(1, 3).as("kv_heads");
    p.shape.q_heads = p.shape.kv_heads * *rc::gen::inRange<std::int64_t>(1, 3).as("q heads per kv head");
    p.shape.head_dim = *rc::gen::element(2, 16, 128).as("head_dim");
    p.shape.causal = *rc::gen::arbitrary<bool>().as("causal");
    p.threads = pick_call_threads().count;
    const auto d = static_cast<std::size_t>(p.shape.head_dim);
    const auto kv_n = static_cast<std::size_t>(p.shape.tokens * p.shape.kv_heads) * d;
    p.q.assign(static_cast<std::size_t>(p.shape.tokens * p.shape.q_heads) * d, 0.0f);
    const float sign = *rc::gen::arbitrary<bool>().as("values negative") ? -1.0f : 1.0f;
    const auto pattern = *rc::gen::resize(
                              8, rc::gen::nonEmpty(rc::gen::container<std::vector<float>>(rc::gen::map(
                                     rc::gen::inRange(64, 257), [sign](int x) { return sign * static_cast<float>(x) / 64; }))))
                              .as("values (v repeats them)");
    p.v.resize(kv_n);
    for (std::size_t j = 0; j < kv_n; ++j) p.v[j] = pattern[j % pattern.size()];
    p.k = p.v;
    if (const auto miss = miss_against_reference(subject, p, tracker)) {
      RC_FAIL(fmt::format("{} tokens, every score 0: output {} (token {}) = {:.9g}, the average of its values "
                          "{:.9g}: |diff| {:.3g} > bound {:.3g}",
                          p.shape.tokens, miss->output, miss->output / (d * static_cast<std::size_t>(p.shape.q_heads)),
                          miss->got, miss->reference, miss->diff, miss->bound));
    }
  });
}

PropertyResult causality(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  const CallThreadsInForce team(config.threads);  // attention's team sizes drawn up to it
  return check_property(subject, config, "changed outputs", tracker, [&] {
    // With the causal mask, output i depends on tokens 0..i only: change every later token and
    // rows 0..i stay the same bit for bit (masked keys add exact zeros).
    Problem p = pick_problem(false);
    p.shape.causal = true;
    const auto cut = *rc::gen::inRange<std::int64_t>(0, p.shape.tokens).as("last token kept");
    Problem changed = p;
    const auto q_row = static_cast<std::size_t>(p.shape.q_heads * p.shape.head_dim);
    const auto kv_row = static_cast<std::size_t>(p.shape.kv_heads * p.shape.head_dim);
    for (std::size_t j = static_cast<std::size_t>(cut + 1) * kv_row; j < p.k.size(); ++j) {
      changed.k[j] = -3 * changed.k[j] + 1;
      changed.v[j] = 5 * changed.v[j] - 2;
    }
    for (std::size_t j = static_cast<std::size_t>(cut + 1) * q_row; j < p.q.size(); ++j) changed.q[j] += 1;
    const auto before = attend(*subject.attention, p), after = attend(*subject.attention, changed);
    const auto kept = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(cut + 1) * q_row);
    const bool same = std::equal(before.begin(), before.begin() + kept, after.begin());
    tracker.observe(same ? 0.0 : 1.0, 0.0);
    if (!same) RC_FAIL(fmt::format("rows 0..{} changed when only later tokens did", cut));
  });
}

}  // namespace

std::span<const Property> attention_properties() {
  static const Property kAll[] = {
      {"attention_matches_reference",
       "within the fp32 accumulation bound of the double reference, causal or full, GQA (seed 003)",
       SubjectKind::attention, matches_reference},
      {"attention_rope_matches_reference",
       "with RoPE, within the fp32 bound of the double reference on separately rotated q and k, "
       "plus both sides' rotation bounds (fused RoPE included)",
       SubjectKind::attention, rope_matches_reference},
      {"attention_equivariant_without_positions",
       "without positions, reordering tokens reorders outputs (seed 000)", SubjectKind::attention,
       equivariance_without_positions},
      {"attention_rope_breaks_equivariance",
       "with RoPE, reordering tokens changes the outputs (seed 000; seed 001's lost else)",
       SubjectKind::attention, rope_breaks_equivariance},
      {"attention_rope_shift_invariant", "RoPE attention unchanged when every position shifts by c",
       SubjectKind::attention, rope_shift_invariance},
      {"attention_equal_scores_average",
       "with every score equal (q = 0), each output is the average of the values it sees, within "
       "the attention bound: same-signed values, where a long sum's roundings add up",
       SubjectKind::attention, equal_scores_average},
      {"attention_causal", "causal: output i does not change when tokens after i change",
       SubjectKind::attention, causality},
  };
  return kAll;
}

}  // namespace ropecheck
