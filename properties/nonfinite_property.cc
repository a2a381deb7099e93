// nonfinite_propagation: NaN, +-Inf and the storage's largest finite values placed in q and k.
// IEEE arithmetic decides what a rotation of them gives, and the float64 oracle computes exactly
// that: a pair holding a NaN or an Inf rotates to non-finite outputs (at m = 0 too: Inf * sin 0
// is NaN), every other pair keeps its bound, and the pass-through tail keeps its bits. A pair of
// huge finite values overflows where, and only where, its exact rotation leaves the storage's
// range. What real kernels get wrong here: scrubbing non-finite values to zero (a "safe"
// nan_to_num), one NaN spreading over the whole head (a dense row product, a per-row scale), an
// overflow clamped to the largest finite value.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "properties/catalogue.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "core/frequency.h"
#include "core/storage.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {
namespace {

enum class Poison { nan, plus_inf, minus_inf, huge_pair };

void showValue(Poison poison, std::ostream& os) {
  constexpr const char* kNames[] = {"NaN", "+Inf", "-Inf", "a pair at +-the largest safe value"};
  os << kNames[static_cast<int>(poison)];
}

// The magnitude of a huge pair: the storage's largest value over the attention factor a, with 2%
// to spare for the roundings of a cos and of the value to the storage. No product x a cos then
// overflows by itself, while the rotated pair, up to sqrt(2) times larger, still can: a product
// that overflows before the sum brings it back is the fp32 arithmetic's limit, not the kernel's.
float huge_value(const RopeSpec& spec, StorageType storage) {
  const double a = std::max(1.0, attention_factor(spec));
  return round_to_storage(static_cast<float>(storage_max(storage) / (a * 1.02)), storage);
}

// Puts 1 to 3 poisons into rotary pairs of x (picked, so that they shrink and show): a NaN or
// an Inf in one feature, or both features of a pair at +-huge_value().
void poison(const RopeSpec& spec, std::vector<float>& x, StorageType storage, const char* tensor) {
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const std::size_t rows = x.size() / dim;
  const float max = huge_value(spec, storage);
  const auto name = [tensor](const char* what) { return fmt::format("{} {}", tensor, what); };
  const auto count = *rc::gen::inRange<int>(1, 4).as(name("poisons"));
  for (int n = 0; n < count; ++n) {
    const auto row = *rc::gen::inRange<std::size_t>(0, rows).as(name("poisoned row (token x heads + head)"));
    const auto pair = *rc::gen::inRange<int>(0, spec.rotary_dim / 2).as(name("poisoned pair"));
    const auto [a, b] = pair_features(spec, pair);
    const bool second = *rc::gen::arbitrary<bool>().as(name("poisoned feature is the pair's second"));
    float& target = x[row * dim + (second ? b : a)];
    switch (*rc::gen::element(Poison::nan, Poison::plus_inf, Poison::minus_inf, Poison::huge_pair)
                 .as(name("poison"))) {
      case Poison::nan: target = std::numeric_limits<float>::quiet_NaN(); break;
      case Poison::plus_inf: target = std::numeric_limits<float>::infinity(); break;
      case Poison::minus_inf: target = -std::numeric_limits<float>::infinity(); break;
      case Poison::huge_pair:
        x[row * dim + a] = *rc::gen::arbitrary<bool>().as(name("huge pair's first positive")) ? max : -max;
        x[row * dim + b] = *rc::gen::arbitrary<bool>().as(name("huge pair's second positive")) ? max : -max;
        break;
    }
  }
}

// Where a result rounded to nearest overflows to Inf in the storage: max plus half an ulp of max,
// 2^(e - (p - 1)) / 2 for max = (2 - 2^(1-p)) 2^e with p significand bits.
double overflow_threshold(StorageType storage) {
  const double max = storage_max(storage);
  const int precision = storage == StorageType::fp32 ? 24 : storage == StorageType::bf16 ? 8 : 11;
  return max + std::ldexp(1.0, std::ilogb(max) - precision);
}

// Checks one rotated tensor against the oracle of its poisoned input, pair by pair. Fails the
// case on the first element that breaks the rule; returns the worst finite element's error.
WorstElement check_tensor(const QkCase& c, const std::vector<float>& x, const std::vector<float>& y,
                          std::int64_t heads, const char* name) {
  const auto expected = oracle_rope(c.spec, x, c.tokens, heads, c.positions);
  const auto theta = inverse_frequencies(c.spec);
  const double a = attention_factor(c.spec);
  const double threshold = overflow_threshold(c.storage);
  const auto dim = static_cast<std::size_t>(c.spec.head_dim);
  const ErrorModel model = c.model();
  const PairPositions at(c.spec);
  WorstElement worst;
  for (std::size_t row = 0; row < x.size() / dim; ++row) {
    const std::size_t t = row / static_cast<std::size_t>(heads);
    const auto where = [&](std::size_t j, int pair) {
      return fmt::format("{} token {} head {} feature {} (pair {}, position {}): input ({:.9g}, "
                         "{:.9g}), got {:.9g}, oracle {:.17g}",
                         name, t, row % static_cast<std::size_t>(heads), j, pair,
                         c.positions[at(t, static_cast<std::size_t>(pair))],
                         x[row * dim + pair_features(c.spec, pair).first],
                         x[row * dim + pair_features(c.spec, pair).second], y[row * dim + j],
                         expected[row * dim + j]);
    };
    for (int i = 0; i < c.spec.rotary_dim / 2; ++i) {
      const auto [fa, fb] = pair_features(c.spec, i);
      const double xa = x[row * dim + fa], xb = x[row * dim + fb];
      const double norm = unit_pair_norm(c.storage, a, std::hypot(xa, xb));
      const double limit = rotation_bound_units(model, c.positions[at(t, static_cast<std::size_t>(i))],
                                                theta[static_cast<std::size_t>(i)], i);
      for (const std::size_t j : {fa, fb}) {
        const double want = expected[row * dim + j];
        const float got = y[row * dim + j];
        if (!std::isfinite(want)) {  // a NaN or Inf input reached this element
          if (std::isfinite(got)) RC_FAIL(fmt::format("a non-finite result became finite: {}", where(j, i)));
          continue;
        }
        // Finite in exact arithmetic: within its bound, or past the storage's range.
        const double slack = limit * kEps32 * norm;
        if (std::abs(want) - slack >= threshold) {
          if (!std::isinf(got) || std::signbit(got) != std::signbit(want)) {
            RC_FAIL(fmt::format("overflowed in exact arithmetic but not to Inf of its sign: {}", where(j, i)));
          }
          continue;
        }
        if (std::isinf(got) && std::abs(want) + slack >= threshold) continue;  // at the edge
        if (!std::isfinite(got)) {
          RC_FAIL(fmt::format("a finite result became {}: {}", got, where(j, i)));
        }
        const double error = norm > 0 ? std::abs(got - want) / (kEps32 * norm)
                                      : (got == want ? 0.0 : INFINITY);
        if (error / limit > worst.ratio || worst.where.empty()) {
          worst = {error / limit, error, limit, where(j, i)};
        }
      }
    }
  }
  return worst;
}

PropertyResult nonfinite_propagation(const Subject& subject, const RunConfig& config) {
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    QkCase c = pick_qk_case(caps, Rotary::any);
    poison(c.spec, c.q, c.storage, "q");
    poison(c.spec, c.k, c.storage, "k");
    std::vector<float> q = c.q, k = c.k;
    apply_guarded(impl, c.spec, q, c.q_heads, k, c.k_heads, c.positions, Evidence::rotation);
    const auto worst_q = check_tensor(c, c.q, q, c.q_heads, "q");
    const auto worst_k = check_tensor(c, c.k, k, c.k_heads, "k");
    const auto& worst = worst_q.ratio >= worst_k.ratio ? worst_q : worst_k;
    tracker.observe(worst.error, worst.bound);
    fail_if_over(worst, "a finite element beside the poisoned ones");
    for (const auto& [in, out, heads] : {std::tuple{&c.q, &q, c.q_heads}, {&c.k, &k, c.k_heads}}) {
      const auto changed = tail_changes(c.spec, *in, *out, heads);
      if (changed.error > 0) RC_FAIL(changed.where);
    }
  });
}

}  // namespace

std::span<const Property> nonfinite_properties() {
  static const Property kAll[] = {
      {"nonfinite_propagation",
       "NaN, +-Inf and the largest finite values in q and k: non-finite exactly where the float64 "
       "oracle is, every other element within its bound, the tail bit for bit",
       SubjectKind::rope, nonfinite_propagation},
  };
  return kAll;
}

}  // namespace ropecheck
