// accuracy.json (see accuracy.h).
#include "accuracy.h"

#include <cmath>
#include <random>

#include "long_range_decay.h"
#include "ropecheck/oracle.h"
#include "ropecheck/registry.h"
#include "ropecheck/tolerance.h"

namespace ropecheck {
namespace {

constexpr int kLargestLog2Position = 24;  // kMaxAbsPosition

// One token of 4 heads x 128 (Llama), interleaved, base 10000: the worst element of q against
// the oracle at `position`, in eps32*|pair| units and as a fraction of the bound.
struct Worst {
  double units = 0, ratio = 0;
};

Worst worst_at(const RopeImpl& impl, const RopeSpec& spec, StorageType storage,
               const std::vector<float>& q_in, std::int64_t position) {
  constexpr std::int64_t kHeads = 4;
  const std::vector<std::int64_t> positions = {position};
  auto q = q_in;
  impl.apply(spec, HeadTensor{q, 1, kHeads, spec.head_dim}, positions);
  const auto exact = oracle_rope(spec, q_in, 1, kHeads, positions);
  const auto theta = oracle_inverse_frequencies(spec);
  Worst worst;
  for (std::size_t row = 0; row < static_cast<std::size_t>(kHeads); ++row) {
    for (std::size_t i = 0; i < theta.size(); ++i) {
      const std::size_t a = row * static_cast<std::size_t>(spec.head_dim) + 2 * i, b = a + 1;
      const double pair = std::hypot(double{q_in[a]}, double{q_in[b]});
      const double bound =
          rotation_bound_units({spec.angle_precision, storage}, position, static_cast<double>(theta[i]));
      for (const std::size_t j : {a, b}) {
        const double units = std::abs(q[j] - exact[j]) / (kEps32 * pair);
        worst.units = std::max(worst.units, units);
        worst.ratio = std::max(worst.ratio, units / bound);
      }
    }
  }
  return worst;
}

nlohmann::ordered_json error_vs_position() {
  std::mt19937 rng(2024);
  std::normal_distribution<float> normal;
  std::vector<float> input(4 * 128);
  for (float& x : input) x = normal(rng);
  auto curves = nlohmann::ordered_json::array();
  for (const RopeImpl* impl : rope_implementations()) {
    const auto caps = impl->capabilities();
    if (!caps.available) continue;
    auto q_in = input;
    for (float& x : q_in) x = round_to_storage(x, caps.storage);
    for (const AnglePrecision angles : caps.angle_precisions) {
      const RopeSpec spec{128, 128, 10000.0, caps.layouts.front(), angles, {}};
      auto points = nlohmann::ordered_json::array();
      for (int k = 0; k <= kLargestLog2Position; ++k) {
        const std::int64_t position = std::int64_t{1} << k;
        const Worst w = worst_at(*impl, spec, caps.storage, q_in, position);
        points.push_back({{"log2_position", k}, {"position", position},
                          {"worst_error", w.units}, {"worst_ratio", w.ratio}});
      }
      curves.push_back({{"implementation", std::string(impl->id())},
                        {"angles", std::string(to_string(angles))},
                        {"storage", std::string(to_string(caps.storage))},
                        {"units", "eps32*|pair|"},
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

nlohmann::ordered_json accuracy_json() {
  return {{"schema", kAccuracySchemaId},
          {"error_vs_position", error_vs_position()},
          {"decay", decay_curves()}};
}

}  // namespace ropecheck
