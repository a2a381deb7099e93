// accuracy.json (see accuracy.h).
#include "properties/accuracy/accuracy.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "properties/harness/long_range_decay.h"
#include "properties/harness/rope_harness.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

constexpr int kLargestLog2Position = 24;  // kMaxAbsPosition
constexpr std::int64_t kHeads = 4;

// The model an fp64-angle implementation of this storage is held to: what "accurate" means.
ErrorModel accurate_model(StorageType storage) { return {AnglePrecision::fp64, storage, 1.0, 0.0}; }

// One token of 4 heads x 128 (Llama), base 10000: the worst element of q against the oracle at
// `position`, in eps32*|pair| units, as a fraction of the implementation's own bound, and as a
// fraction of the accurate (fp64-angle) bound for its storage.
struct Worst {
  double units = 0, ratio = 0, accurate_ratio = 0;
};

Worst worst_at(const RopeImpl& impl, const RopeSpec& spec, StorageType storage,
               const std::vector<float>& q_in, std::int64_t position) {
  const std::vector<std::int64_t> positions = {position};
  auto q = q_in;
  impl.apply(spec, HeadTensor{q, 1, kHeads, spec.head_dim}, positions);
  const auto exact = oracle_rope(spec, q_in, 1, kHeads, positions);
  const auto theta = oracle_inverse_frequencies(spec);
  const auto model = error_model(spec, storage);
  Worst worst;
  for (std::size_t row = 0; row < static_cast<std::size_t>(kHeads); ++row) {
    for (std::size_t i = 0; i < theta.size(); ++i) {
      const auto [fa, fb] = pair_features(spec, static_cast<int>(i));
      const std::size_t a = row * static_cast<std::size_t>(spec.head_dim) + fa;
      const std::size_t b = row * static_cast<std::size_t>(spec.head_dim) + fb;
      const double pair = unit_pair_norm(storage, model.attention_factor,
                                         std::hypot(double{q_in[a]}, double{q_in[b]}));
      const auto t = static_cast<double>(theta[i]);
      const double bound = rotation_bound_units(model, position, t, static_cast<int>(i));
      const double accurate = rotation_bound_units(accurate_model(storage), position, t, static_cast<int>(i));
      for (const std::size_t j : {a, b}) {
        const double units = std::abs(q[j] - exact[j]) / (kEps32 * pair);
        worst.units = std::max(worst.units, units);
        worst.ratio = std::max(worst.ratio, units / bound);
        worst.accurate_ratio = std::max(worst.accurate_ratio, units / accurate);
      }
    }
  }
  return worst;
}

// The angle formations worth a curve: each one an implementation has; a mutant forms its angles
// its own way whatever it declares, so one curve.
std::vector<AnglePrecision> angle_formations(const RopeImpl& impl) {
  auto formations = impl.capabilities().angle_precisions;
  if (impl.id().starts_with("mutant/")) formations.resize(1);
  return formations;
}

std::vector<float> normal_input(StorageType storage, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<std::size_t>(kHeads) * 128);
  for (float& v : x) v = round_to_storage(normal(rng), storage);
  return x;
}

nlohmann::ordered_json error_vs_position(const std::vector<const RopeImpl*>& impls) {
  auto curves = nlohmann::ordered_json::array();
  for (const RopeImpl* impl : impls) {
    const auto caps = impl->capabilities();
    if (!caps.available) continue;
    const auto q_in = normal_input(caps.storage, 2024);
    for (const AnglePrecision angles : angle_formations(*impl)) {
      const RopeSpec spec{128, 128, 10000.0, caps.layouts.front(), angles, {}, {}};
      auto points = nlohmann::ordered_json::array();
      std::int64_t largest_accurate = 0;
      bool still_accurate = true;
      for (int k = 0; k <= kLargestLog2Position; ++k) {
        const std::int64_t position = std::int64_t{1} << k;
        const Worst w = worst_at(*impl, spec, caps.storage, q_in, position);
        still_accurate = still_accurate && w.accurate_ratio <= 1.0;
        if (still_accurate) largest_accurate = position;
        points.push_back({{"log2_position", k}, {"position", position},
                          {"worst_error", w.units}, {"worst_ratio", w.ratio},
                          {"accurate_ratio", w.accurate_ratio}});
      }
      // 4095: the last position of a 4k context, where bf16 angles are already a radian off.
      const Worst at_4095 = worst_at(*impl, spec, caps.storage, q_in, 4095);
      curves.push_back({{"implementation", std::string(impl->id())},
                        {"angles", std::string(to_string(angles))},
                        {"storage", std::string(to_string(caps.storage))},
                        {"units", "eps32*|pair|"},
                        {"largest_position_within_accurate_bound", largest_accurate},
                        {"error_at_4095", at_4095.units},
                        {"points", std::move(points)}});
    }
  }
  return curves;
}

// Relative-position invariance at large shifts: <R_c q, R_(c+delta) k> against the exact
// <q, R_delta k>, for shifts c = 2^k up to 2^24 - delta, worst over 4 heads, in units of
// eps32 * sum_p |q_p| |k_p|. The limit is what two accurately rotated vectors allow:
// 2 * norm_bound_units of the accurate model (plus eps32 * norm_bound^2, second order).
nlohmann::ordered_json shift_invariance(const std::vector<const RopeImpl*>& impls) {
  constexpr std::int64_t kDelta = 3;
  auto curves = nlohmann::ordered_json::array();
  for (const RopeImpl* impl : impls) {
    const auto caps = impl->capabilities();
    if (!caps.available) continue;
    const auto q = normal_input(caps.storage, 7), k = normal_input(caps.storage, 11);
    for (const AnglePrecision angles : angle_formations(*impl)) {
      const RopeSpec spec{128, 128, 10000.0, caps.layouts.front(), angles, {}, {}};
      const double per_side = norm_bound_units(accurate_model(caps.storage));
      const double limit = 2 * per_side + kEps32 * per_side * per_side;
      const std::vector<std::int64_t> at_delta = {kDelta};
      const auto k_rel = oracle_rope(spec, k, 1, kHeads, at_delta);
      auto points = nlohmann::ordered_json::array();
      std::int64_t largest_holding = 0;
      bool holds = true;
      for (int e = 0; e <= kLargestLog2Position; ++e) {
        const std::int64_t c = std::min(std::int64_t{1} << e, kMaxAbsPosition - kDelta);
        const std::vector<std::int64_t> m = {c}, n = {c + kDelta};
        auto q_m = q, k_n = k;
        impl->apply(spec, HeadTensor{q_m, 1, kHeads, spec.head_dim}, m);
        impl->apply(spec, HeadTensor{k_n, 1, kHeads, spec.head_dim}, n);
        double worst = 0;
        for (std::int64_t h = 0; h < kHeads; ++h) {
          long double got = 0, exact = 0, weight = 0;
          for (std::size_t i = 0; i < static_cast<std::size_t>(spec.rotary_dim / 2); ++i) {
            const auto [fa, fb] = pair_features(spec, static_cast<int>(i));
            const std::size_t row = static_cast<std::size_t>(h * spec.head_dim);
            for (const std::size_t j : {row + fa, row + fb}) {
              got += static_cast<long double>(q_m[j]) * k_n[j];
              exact += static_cast<long double>(q[j]) * k_rel[j];
            }
            const auto unit = [&](const std::vector<float>& x) -> long double {
              return unit_pair_norm(caps.storage, 1.0, std::hypot(double{x[row + fa]}, double{x[row + fb]}));
            };
            weight += unit(q) * unit(k);
          }
          worst = std::max(worst, static_cast<double>(std::abs(got - exact) / (kEps32 * weight)));
        }
        holds = holds && worst <= limit;
        if (holds) largest_holding = c;
        points.push_back({{"log2_shift", e}, {"shift", c}, {"worst_error", worst}});
      }
      curves.push_back({{"implementation", std::string(impl->id())},
                        {"angles", std::string(to_string(angles))},
                        {"storage", std::string(to_string(caps.storage))},
                        {"delta", kDelta},
                        {"units", "eps32*sum|q_p||k_p|"},
                        {"limit", limit},
                        {"largest_shift_within_limit", largest_holding},
                        {"points", std::move(points)}});
    }
  }
  return curves;
}

// The envelope max |score| over 200 log-spaced bins of [1, x_max]: what a plot can show of
// 2^16 points per curve.
nlohmann::ordered_json decay_curves() {
  auto curves = nlohmann::ordered_json::array();
  constexpr std::int64_t kXMax = std::int64_t{1} << 16;
  constexpr int kBins = 200;
  for (const int d : {64, 128, 256}) {
    std::vector<double> theta(static_cast<std::size_t>(d / 2));
    for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = std::pow(10000.0, -2.0 * static_cast<double>(i) / d);
    const auto score = ones_score(theta, kXMax);
    const double bound = long_range_decay_bound(d);
    const DecayVerdict verdict = long_range_decay(score, bound);
    auto x = nlohmann::ordered_json::array(), envelope = nlohmann::ordered_json::array();
    std::int64_t from = 1;
    for (int bin = 1; bin <= kBins; ++bin) {
      const auto to = static_cast<std::int64_t>(std::pow(static_cast<double>(kXMax), static_cast<double>(bin) / kBins));
      if (to < from) continue;
      double largest = 0;
      for (std::int64_t i = from; i <= to; ++i) largest = std::max(largest, std::abs(score[static_cast<std::size_t>(i)]));
      x.push_back(to);
      envelope.push_back(largest);
      from = to + 1;
    }
    curves.push_back({{"d", d}, {"base", 10000.0}, {"bound", bound}, {"holds", verdict.holds},
                      {"x", std::move(x)}, {"envelope", std::move(envelope)},
                      {"window_max", verdict.window_max}});
  }
  return curves;
}

}  // namespace

nlohmann::ordered_json accuracy_json(const std::vector<const RopeImpl*>& extra) {
  std::vector<const RopeImpl*> impls(rope_implementations().begin(), rope_implementations().end());
  impls.insert(impls.end(), extra.begin(), extra.end());
  // The bf16-angle mutant beside them: what angles in a bf16 model's dtype cost.
  for (const RopeImpl* mutant : rope_mutants()) {
    if (mutant->id() == "mutant/bf16_angles") impls.push_back(mutant);
  }
  return {{"schema", kAccuracySchemaId},
          {"error_vs_position", error_vs_position(impls)},
          {"shift_invariance", shift_invariance(impls)},
          {"decay", decay_curves()}};
}

}  // namespace ropecheck
