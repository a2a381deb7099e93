// Multi-head cases: the generator, the position encodings of a case, and seed 000's reordering
// check on the whole layer (multi_head_cases.h).
#include "properties/harness/multi_head_cases.h"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "impls/sinusoidal/absolute_encoding.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

// Values i * unit, i uniform in [-steps, steps] at every RapidCheck size and never shrunk: small
// sizes, or shrinking, would make every element its minimum, identical tokens that no position
// can tell apart, and a failure would shrink to that instead of to its real cause. The shapes
// still shrink.
std::vector<float> pick_grid(std::size_t n, int steps, double unit, const char* name) {
  return *rc::gen::noShrink(rc::gen::container<std::vector<float>>(
                                n, rc::gen::resize(rc::kNominalSize,
                                                   rc::gen::map(rc::gen::inRange(-steps, steps + 1), [unit](int i) {
                                                     return static_cast<float>(i * unit);
                                                   }))))
              .as(name);
}

}  // namespace

MultiHeadCase pick_multi_head_case(bool causal_any, std::int64_t min_tokens) {
  MultiHeadCase c;
  auto& w = c.weights;
  w.kv_heads = *rc::gen::inRange(1, 3).as("kv_heads");
  w.q_heads = w.kv_heads * *rc::gen::inRange(1, 3).as("q heads per kv head");
  w.head_dim = *rc::gen::element(2, 4, 6, 8, 16).as("head_dim");
  const int other_width = 2 * *rc::gen::inRange(1, 33).as("d_model if not heads x head_dim, halved");
  w.d_model = *rc::gen::element(w.q_heads * w.head_dim, other_width).as("d_model");
  c.tokens = *rc::gen::inRange<std::int64_t>(min_tokens, 17).as("tokens");
  c.causal = causal_any ? *rc::gen::arbitrary<bool>().as("causal") : false;
  const auto dm = static_cast<std::size_t>(w.d_model), T = static_cast<std::size_t>(c.tokens);
  const auto q_width = static_cast<std::size_t>(w.q_heads * w.head_dim);
  const auto kv_width = static_cast<std::size_t>(w.kv_heads * w.head_dim);
  // Activations on a 1/64 grid in [-4, 4] (exact in fp32); weights uniform in
  // [-1, 1] / sqrt(fan_in), as layers are initialised, so q, k, v and the scores stay O(1).
  c.x = pick_grid(T * dm, 256, 1.0 / 64, "activations x");
  w.w_q = pick_grid(dm * q_width, 256, 1.0 / 256 / std::sqrt(static_cast<double>(dm)), "W_q");
  w.w_k = pick_grid(dm * kv_width, 256, 1.0 / 256 / std::sqrt(static_cast<double>(dm)), "W_k");
  w.w_v = pick_grid(dm * kv_width, 256, 1.0 / 256 / std::sqrt(static_cast<double>(dm)), "W_v");
  w.w_o = pick_grid(q_width * dm, 256, 1.0 / 256 / std::sqrt(static_cast<double>(q_width)), "W_o");
  c.positions.resize(T);
  std::iota(c.positions.begin(), c.positions.end(), 0);
  c.sinusoidal = find_sinusoidal("sinusoidal/formula")->table({w.d_model, 10000.0}, c.positions);
  c.learned = LearnedPositionTable(static_cast<int>(c.tokens), w.d_model,
                                   *rc::gen::arbitrary<std::uint32_t>().as("learned table's seed"))
                  .lookup(c.positions);
  c.rope.head_dim = w.head_dim;
  c.rope.rotary_dim = 2 * *rc::gen::inRange(1, w.head_dim / 2 + 1).as("rotary pairs");  // partial rotary too
  c.rope.base = *rc::gen::element(100.0, 10000.0, 500000.0).as("base");
  c.rope.layout = *rc::gen::element(Layout::interleaved, Layout::half_split).as("layout");
  c.rope.angle_precision = AnglePrecision::fp64;
  return c;
}

PositionalEncoding positional_for(const MultiHeadCase& c, PositionalKind kind, bool learned) {
  switch (kind) {
    case PositionalKind::none: return no_positions();
    case PositionalKind::absolute:
      return absolute_positions(learned ? c.learned : c.sinusoidal, c.positions);
    case PositionalKind::rotary: return rotary_positions(c.rope, c.positions);
  }
  return no_positions();
}

std::vector<float> permute_tokens(std::span<const float> x, std::int64_t width,
                                  std::span<const std::int64_t> order) {
  const auto row = static_cast<std::size_t>(width);
  std::vector<float> out(x.size());
  for (std::size_t t = 0; t < order.size(); ++t) {
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(order[t]) * row),
                row, out.begin() + static_cast<std::ptrdiff_t>(t * row));
  }
  return out;
}

std::vector<std::int64_t> pick_reordering(std::int64_t tokens) {
  if (tokens < 2) throw std::logic_error("pick_reordering: one token has no non-identity order");
  std::vector<std::int64_t> order(static_cast<std::size_t>(tokens));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(*rc::gen::arbitrary<unsigned>().as("token order's seed")));
  if (std::is_sorted(order.begin(), order.end())) std::swap(order[0], order[1]);
  return order;
}

ReorderGap reorder_gap(const AttentionImpl& attention, const MultiHeadCase& c,
                       PositionalKind kind, bool learned, std::span<const std::int64_t> order) {
  // The full mask: under the causal one, the order of the tokens is itself a position.
  const auto positional = positional_for(c, kind, learned);
  const auto& w = c.weights;
  const auto moved_x = permute_tokens(c.x, w.d_model, order);
  const auto out = multi_head_attention(w, c.x, c.tokens, positional, attention, false);
  const auto moved = multi_head_attention(w, moved_x, c.tokens, positional, attention, false);
  const auto ref = multi_head_reference(w, c.x, c.tokens, positional, false, attention.kv_storage());
  const auto moved_ref = multi_head_reference(w, moved_x, c.tokens, positional, false, attention.kv_storage());
  ReorderGap gap;
  bool first = true;
  const auto dm = static_cast<std::size_t>(w.d_model);
  for (std::size_t t = 0; t < order.size(); ++t) {
    for (std::size_t o = 0; o < dm; ++o) {
      const std::size_t at = static_cast<std::size_t>(order[t]) * dm + o, moved_at = t * dm + o;
      const double diff = std::abs(static_cast<double>(moved[moved_at]) - out[at]);
      const double bound = ref.bound[at] + moved_ref.bound[moved_at];
      double ratio = bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0.0);
      if (std::isnan(ratio)) ratio = INFINITY;
      if (first || ratio > gap.worst_ratio) {
        first = false;
        gap = {ratio, diff, bound, fmt::format("slot {} (token {}), output {}", t, order[t], o)};
      }
    }
  }
  return gap;
}

}  // namespace ropecheck
