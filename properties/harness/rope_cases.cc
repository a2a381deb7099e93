// Random RoPE problems (see rope_cases.h).
#include "properties/harness/rope_cases.h"

#include <algorithm>
#include <cmath>

#include "properties/harness/axis_generators.h"
#include "properties/harness/model_shape_cases.h"
#include "properties/harness/rope_harness.h"
#include "core/frequency.h"
#include "core/storage_convert.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {

std::vector<float> pick_tensor(const RopeSpec& spec, std::int64_t tokens, std::int64_t heads,
                               StorageType storage, const std::string& name) {
  const auto count = static_cast<std::size_t>(tokens * heads * spec.head_dim);
  const auto [lo, hi] = storage_exponents(storage);
  return pick_floats(count, lo, hi, name);
}

namespace {

// A model's own rotation in place of the drawn one, each part where the subject implements it.
void take_model_rope(RopeSpec& spec, const RopeCapabilities& caps, const ModelRope& rope) {
  if (std::find(caps.layouts.begin(), caps.layouts.end(), rope.layout) != caps.layouts.end()) {
    spec.layout = rope.layout;
  }
  spec.base = rope.base;
  if (caps.implements(rope.scaling.kind)) spec.scaling = rope.scaling;
}

// A model shape's tensors: its head_dim and heads, its token count shrinking only while failing.
void take_model_shape(QkCase& c, const RopeCapabilities& caps, Rotary rotary,
                      const ModelShape& shape) {
  const auto d = static_cast<int>(shape.head_dim);
  int r = shape.rotary_dim > 0 && caps.partial_rotary ? static_cast<int>(shape.rotary_dim) : d;
  if (rotary == Rotary::full) r = d;
  if (rotary == Rotary::partial && r == d) {
    r = *at_full_size(rc::gen::map(rc::gen::inRange(1, d / 2), [](int h) { return 2 * h; })).as("rotary_dim");
  }
  c.spec = *at_full_size(rope_spec_at(caps, d, r)).as("spec");
  if (shape.rope != nullptr) take_model_rope(c.spec, caps, *shape.rope);
  // The shape's own axes: one, or a vision-language model's sections (whose vision tower takes
  // no frequency scaling); one axis where the caller's capabilities leave them out (scalable()).
  ModelShape as_run = shape;
  // A partial rotary_dim drawn for a vision shape must keep its pair count even (position_axes.h).
  if (!caps.implements(shape.axes.mode) || (shape.axes.mode == AxisMode::vision && r % 4 != 0)) as_run.axes = {};
  as_run.axes = sections_for(as_run.axes, r);  // a drawn partial rotary_dim: the same proportions
  c.spec.axes = as_run.axes;
  if (as_run.axes.mode == AxisMode::vision) c.spec.scaling = RopeScaling{};
  c.tokens = *starting_at(shape.tokens, 1).as("tokens");
  c.q_heads = shape.q_heads;
  c.k_heads = shape.k_heads;
  c.positions = *at_full_size(model_positions(as_run, c.tokens, position_limit(caps))).as("positions");
}

// Tokens and heads at the sizes where loops switch, within kSwitchCaseElements.
void take_switching_sizes(QkCase& c) {
  c.k_heads = *power_of_two_neighbour(4).as("kv_heads");
  c.q_heads = c.k_heads * *power_of_two_neighbour(2).as("q heads per kv head");
  const std::int64_t row = (c.q_heads + c.k_heads) * c.spec.head_dim;
  c.tokens = std::min(*power_of_two_neighbour(12).as("tokens (at most the size budget)"),
                      std::max<std::int64_t>(1, kSwitchCaseElements / row));
}

}  // namespace

QkCase pick_qk_case(const RopeCapabilities& caps, Rotary rotary, Pass pass) {
  QkCase c;
  if (const ModelShape* shape = model_shape_in_force()) {
    take_model_shape(c, caps, rotary, *shape);
  } else {
    c.spec = *rope_spec(caps, rotary).as("spec");
    if (*rc::gen::inRange(0, 4).as("size class (3: where loops switch, else small)") == 3) {
      take_switching_sizes(c);
    } else {
      c.tokens = *rc::gen::inRange<std::int64_t>(1, 9).as("tokens");
      c.k_heads = *rc::gen::inRange<std::int64_t>(1, 4).as("kv_heads");
      c.q_heads = c.k_heads * *rc::gen::inRange<std::int64_t>(1, 4).as("q heads per kv head");
    }
    c.positions = *token_positions(c.spec, static_cast<std::size_t>(c.tokens), position_limit(caps)).as("positions");
  }
  c.spec.pass = pass;
  c.storage = caps.storage;
  c.q = pick_tensor(c.spec, c.tokens, c.q_heads, c.storage, "q");
  c.k = pick_tensor(c.spec, c.tokens, c.k_heads, c.storage, "k");
  round_to_storage(c.q, c.storage);
  round_to_storage(c.k, c.storage);
  return c;
}

QkCase pick_rotation_case(const RopeCapabilities& caps, Rotary rotary, Pass pass) {
  QkCase c = pick_qk_case(caps, rotary, pass);
  if (c.spec.scaling.kind != ScalingKind::none) c.spec.scaling.attention_factor = 1.0;
  return c;
}

OracleWorst worst_against_oracle(const QkCase& c, std::span<const float> q, std::span<const float> k) {
  // The tolerance model (tolerance.h): rounding plus the declared angle precision's term.
  WorstElement worst_q, worst_k;
  // In blocks of tokens: a model shape's oracle output is never held whole (a prefill's would be
  // 268 MB of double per tensor), and each block's stays in cache while it is compared.
  constexpr std::int64_t kBlockTokens = 64;
  for (std::int64_t first = 0; first < c.tokens; first += kBlockTokens) {
    const std::int64_t n = std::min(kBlockTokens, c.tokens - first);
    const auto axes = static_cast<std::size_t>(axis_count(c.spec));
    const auto positions = std::span(c.positions).subspan(static_cast<std::size_t>(first) * axes,
                                                          static_cast<std::size_t>(n) * axes);
    const auto bound = [&](std::size_t at, double theta, int pair) {
      return rotation_bound_units(c.model(), positions[at], theta, pair);
    };
    const auto block = [&](const std::vector<float>& x, std::span<const float> y, std::int64_t heads,
                           WorstElement& worst) {
      const auto row = static_cast<std::size_t>(heads * c.spec.head_dim);
      const auto in = std::span(x).subspan(static_cast<std::size_t>(first) * row,
                                           static_cast<std::size_t>(n) * row);
      auto w = worst_rotary_error(c.spec, c.storage, in,
                                  y.subspan(static_cast<std::size_t>(first) * row, in.size()),
                                  oracle_rope(c.spec, in, n, heads, positions), heads, positions,
                                  bound, static_cast<std::size_t>(first));
      if (w.ratio > worst.ratio || worst.where.empty()) worst = std::move(w);
    };
    block(c.q, q, c.q_heads, worst_q);
    block(c.k, k, c.k_heads, worst_k);
  }
  if (worst_q.ratio >= worst_k.ratio) return {std::move(worst_q), "q"};
  return {std::move(worst_k), "k"};
}

void round_to_storage(std::vector<float>& x, StorageType storage) {
  round_to_storage(std::span<float>(x), storage);  // storage_convert.h: a prefill's 33M at once
}

std::vector<double> pair_norms(const RopeSpec& spec, const std::vector<float>& x) {
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const auto pairs = static_cast<std::size_t>(spec.rotary_dim / 2);
  std::vector<double> norms;
  norms.reserve(x.size() / dim * pairs);
  for (std::size_t row = 0; row < x.size() / dim; ++row) {
    for (std::size_t i = 0; i < pairs; ++i) {
      const auto [a, b] = pair_features(spec, static_cast<int>(i));
      norms.push_back(pair_magnitude(x[row * dim + a], x[row * dim + b]));
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
