// Random RoPE problems (see rope_cases.h).
#include "properties/harness/rope_cases.h"

#include <cmath>

#include "properties/harness/rope_harness.h"
#include "core/frequency.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {

std::vector<float> pick_tensor(const RopeSpec& spec, std::int64_t tokens, std::int64_t heads,
                               StorageType storage) {
  return *storage_floats(static_cast<std::size_t>(tokens * heads * spec.head_dim), storage);
}

QkCase pick_qk_case(const RopeCapabilities& caps, Rotary rotary) {
  QkCase c;
  c.spec = *rope_spec(caps, rotary);
  c.tokens = *rc::gen::inRange<std::int64_t>(1, 9);
  c.k_heads = *rc::gen::inRange<std::int64_t>(1, 4);
  c.q_heads = c.k_heads * *rc::gen::inRange<std::int64_t>(1, 4);
  c.positions = *position_ids(static_cast<std::size_t>(c.tokens), position_limit(caps));
  c.storage = caps.storage;
  c.q = pick_tensor(c.spec, c.tokens, c.q_heads, c.storage);
  c.k = pick_tensor(c.spec, c.tokens, c.k_heads, c.storage);
  round_to_storage(c.q, c.storage);
  round_to_storage(c.k, c.storage);
  return c;
}

QkCase pick_rotation_case(const RopeCapabilities& caps, Rotary rotary) {
  QkCase c = pick_qk_case(caps, rotary);
  if (c.spec.scaling.kind != ScalingKind::none) c.spec.scaling.attention_factor = 1.0;
  return c;
}

OracleWorst worst_against_oracle(const QkCase& c, std::span<const float> q, std::span<const float> k) {
  // The tolerance model (tolerance.h): rounding plus the declared angle precision's term.
  const auto bound = [&](std::size_t t, double theta, int pair) {
    return rotation_bound_units(c.model(), c.positions[t], theta, pair);
  };
  auto worst_q = worst_rotary_error(c.spec, c.storage, c.q, q,
                                    oracle_rope(c.spec, c.q, c.tokens, c.q_heads, c.positions),
                                    c.q_heads, c.positions, bound);
  auto worst_k = worst_rotary_error(c.spec, c.storage, c.k, k,
                                    oracle_rope(c.spec, c.k, c.tokens, c.k_heads, c.positions),
                                    c.k_heads, c.positions, bound);
  if (worst_q.ratio >= worst_k.ratio) return {std::move(worst_q), "q"};
  return {std::move(worst_k), "k"};
}

void round_to_storage(std::vector<float>& x, StorageType storage) {
  for (float& v : x) v = round_to_storage(v, storage);
}

std::vector<double> pair_norms(const RopeSpec& spec, const std::vector<float>& x) {
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const auto pairs = static_cast<std::size_t>(spec.rotary_dim / 2);
  std::vector<double> norms;
  norms.reserve(x.size() / dim * pairs);
  for (std::size_t row = 0; row < x.size() / dim; ++row) {
    for (std::size_t i = 0; i < pairs; ++i) {
      const auto [a, b] = pair_features(spec, static_cast<int>(i));
      norms.push_back(std::hypot(static_cast<double>(x[row * dim + a]),
                                 static_cast<double>(x[row * dim + b])));
    }
  }
  return norms;
}

std::vector<double> unit_pair_norms(const RopeSpec& spec, StorageType storage,
                                    const std::vector<float>& x) {
  auto norms = pair_norms(spec, x);
  const double a = attention_factor(spec);
  for (double& n : norms) n = unit_pair_norm(storage, a, n);
  return norms;
}

}  // namespace ropecheck
