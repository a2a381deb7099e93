// Seed 002's layout equivalence. Meta keeps q/k features interleaved; HF permutes the rows of
// W_q and W_k per head (permute_for_rotate_half) and applies rotate_half on the half-split layout.
// For random W_q, W_k and inputs x: the HF path's rotated q equals the Meta path's rotated q with
// its features permuted the same way, and every q.k score is equal.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/harness/axis_generators.h"
#include "properties/harness/model_shape_cases.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "properties/catalogue.h"
#include "core/frequency.h"
#include "core/layout_permutation.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

// x [tokens][dim_in] times W^T, W [rows][dim_in]: accumulated in double, rounded once, so a
// permutation of W's rows permutes the output bit for bit.
std::vector<float> project(const std::vector<float>& x, const std::vector<float>& w, int dim_in) {
  const auto din = static_cast<std::size_t>(dim_in);
  const std::size_t tokens = x.size() / din, rows = w.size() / din;
  std::vector<float> out(tokens * rows);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (std::size_t j = 0; j < din; ++j) acc += static_cast<double>(x[t * din + j]) * w[r * din + j];
      out[t * rows + r] = static_cast<float>(acc);
    }
  }
  return out;
}

// Each head vector of a half-split tensor back into interleaved feature order.
std::vector<float> to_interleaved(const std::vector<float>& half, int head_dim) {
  const auto to = interleaved_to_half_split(head_dim);
  std::vector<float> out(half.size());
  const auto d = static_cast<std::size_t>(head_dim);
  for (std::size_t row = 0; row < half.size() / d; ++row) {
    gather_features(std::span(half).subspan(row * d, d), std::span(out).subspan(row * d, d), to);
  }
  return out;
}

// Entries of x and W. For fp16 storage every projection (at most 16 products) must stay below
// 2^14, fp16 storage_float's bound: factors under 2^5, so products under 2^10. Small ones and
// cancellations give subnormal projections, which tolerance.h's unit_pair_norm covers.
// A model shape's weights (q_heads x head_dim x dim_in) come from a seed (pick_floats).
std::vector<float> projection_operands(std::size_t count, StorageType storage, const char* name) {
  if (storage != StorageType::fp16) {
    const auto [lo, hi] = storage_exponents(storage);
    return pick_floats(count, lo, hi, name);
  }
  return pick_floats(count, -12, 4, name);
}

double dot(const float* a, const float* b, std::size_t n) {
  double s = 0;
  for (std::size_t j = 0; j < n; ++j) s += static_cast<double>(a[j]) * b[j];
  return s;
}

}  // namespace

// The case's sizes: small ones drawn, or a model shape's (model_shape_cases.h) with its full
// rotary head_dim, heads and token count (shrinking only while failing), packed positions.
struct LayoutCase {
  RopeSpec meta;
  int dim_in = 1, kv_heads = 1, q_heads = 1;
  std::size_t tokens = 1;
  std::vector<std::int64_t> positions;
};

LayoutCase pick_layout_case(const RopeCapabilities& caps) {
  LayoutCase c;
  if (const ModelShape* shape = model_shape_in_force()) {
    const auto d = static_cast<int>(shape->head_dim);
    c.meta = *at_full_size(rope_spec_at(caps, d, d)).as("spec (Meta's, interleaved)");
    c.dim_in = *at_full_size(rc::gen::inRange(1, 17)).as("d_model of the weights");
    c.kv_heads = static_cast<int>(shape->k_heads);
    c.q_heads = static_cast<int>(shape->q_heads);
    c.tokens = static_cast<std::size_t>(*starting_at(shape->tokens, 1).as("tokens"));
    c.meta.axes = shape->axes;  // the shape's own axes (a vision tower's take no scaling)
    if (shape->axes.mode == AxisMode::vision) c.meta.scaling = RopeScaling{};
    c.positions = *at_full_size(model_positions(*shape, static_cast<std::int64_t>(c.tokens),
                                                position_limit(caps)))
                       .as("positions");
    return c;
  }
  c.meta = *rope_spec(caps, Rotary::full).as("spec (Meta's, interleaved)");
  c.dim_in = *rc::gen::inRange(1, 17).as("d_model of the weights");
  c.kv_heads = *rc::gen::inRange(1, 3).as("kv_heads");
  c.q_heads = c.kv_heads * *rc::gen::inRange(1, 3).as("q heads per kv head");
  c.tokens = *rc::gen::inRange<std::size_t>(1, 6).as("tokens");
  c.positions = *token_positions(c.meta, c.tokens, position_limit(caps)).as("positions");
  return c;
}

PropertyResult layout_equivalence(const Subject& subject, const RunConfig& config) {
  const RopeImpl& impl = *subject.rope;
  auto caps = impl.capabilities();
  const auto has = [&](Layout l) {
    return std::find(caps.layouts.begin(), caps.layouts.end(), l) != caps.layouts.end();
  };
  if (!has(Layout::interleaved) || !has(Layout::half_split)) {
    return skipped_result(subject, config, "needs both layouts");
  }
  caps.layouts = {Layout::interleaved};  // the spec generator picks the Meta side's layout
  return check_rope_property(subject, config, kPairUnits,
                             [&](const RopeImpl&, const RopeCapabilities&, ErrorTracker& tracker) {
    const LayoutCase c = pick_layout_case(caps);
    const RopeSpec& meta = c.meta;
    RopeSpec hf = meta;
    hf.layout = Layout::half_split;
    const int dim_in = c.dim_in, kv_heads = c.kv_heads, q_heads = c.q_heads;
    const std::size_t tokens = c.tokens;
    const std::vector<std::int64_t>& positions = c.positions;
    const auto x = projection_operands(tokens * static_cast<std::size_t>(dim_in), caps.storage, "activations x");
    const auto wq = projection_operands(static_cast<std::size_t>(q_heads * meta.head_dim * dim_in),
                                        caps.storage, "W_q");
    const auto wk = projection_operands(static_cast<std::size_t>(kv_heads * meta.head_dim * dim_in),
                                        caps.storage, "W_k");

    // Projections rounded to the storage type: a row permutation commutes with the rounding.
    const auto project_stored = [&](const std::vector<float>& w) {
      auto out = project(x, w, dim_in);
      round_to_storage(out, caps.storage);
      return out;
    };
    const auto q_in = project_stored(wq), k_in = project_stored(wk);
    const auto q_meta = rotated(impl, meta, q_in, q_heads, positions);
    const auto k_meta = rotated(impl, meta, k_in, kv_heads, positions);
    const auto q_hf = rotated(impl, hf, project_stored(permute_for_rotate_half(wq, q_heads, dim_in)),
                              q_heads, positions);
    const auto k_hf = rotated(impl, hf, project_stored(permute_for_rotate_half(wk, kv_heads, dim_in)),
                              kv_heads, positions);

    // Features: both sides carry their own rotation error against the same truth.
    const ErrorModel p = error_model(meta, caps.storage);
    const auto bound = [&](std::size_t t, double theta, int pair) {
      return 2 * rotation_bound_units(p, positions[t], theta, pair);
    };
    const std::vector<double> q_meta_d(q_meta.begin(), q_meta.end());
    const auto worst = worst_rotary_error(meta, caps.storage, q_in, to_interleaved(q_hf, meta.head_dim), q_meta_d,
                                          q_heads, positions, bound);
    tracker.observe(worst.error, worst.bound);
    if (worst.ratio > 1) {
      RC_FAIL(fmt::format("HF path q (unpermuted) differs from Meta path q: error {:.4g} > bound "
                          "{:.4g} at {}", worst.error, worst.bound, worst.where));
    }

    // Scores q.k per (token, q head): a feature permutation leaves each dot product unchanged,
    // so they differ only by the two paths' rotation errors, bounded as in relative_position.
    // (Checked, not tracked: the tracked error is per feature, in eps32*|pair|.)
    const auto d = static_cast<std::size_t>(meta.head_dim);
    const auto q_norms = unit_pair_norms(meta, caps.storage, q_in);
    const auto k_norms = unit_pair_norms(meta, caps.storage, k_in);
    const auto theta = inverse_frequencies(meta);
    const PairPositions at(meta);
    for (std::size_t t = 0; t < tokens; ++t) {
      for (int h = 0; h < q_heads; ++h) {
        const std::size_t qrow = t * static_cast<std::size_t>(q_heads) + static_cast<std::size_t>(h);
        const std::size_t krow = t * static_cast<std::size_t>(kv_heads) + static_cast<std::size_t>(h / (q_heads / kv_heads));
        const double s_meta = dot(&q_meta[qrow * d], &k_meta[krow * d], d);
        const double s_hf = dot(&q_hf[qrow * d], &k_hf[krow * d], d);
        double weight = 0, limit = 0;
        for (std::size_t i = 0; i < theta.size(); ++i) {
          const double w = q_norms[qrow * theta.size() + i] * k_norms[krow * theta.size() + i];
          const double pb = pair_error_bound_units(p, positions[at(t, i)], theta[i], static_cast<int>(i));
          weight += w;
          limit += 2 * w * (2 * pb + kEps32 * pb * pb);  // two paths, each q and k rotated
        }
        const double diff = std::abs(s_meta - s_hf);
        if (!(diff <= kEps32 * limit)) {
          RC_FAIL(fmt::format("score token {} head {}: Meta {:.17g} vs HF {:.17g}, |diff| {:.4g} > "
                              "bound {:.4g}", t, h, s_meta, s_hf, diff, kEps32 * limit));
        }
      }
    }
  });
}

// This family's properties, in catalogue order (catalogue.cc lists the families).
std::span<const Property> layout_equivalence_properties() {
  static const Property kAll[] = {
      {"layout_equivalence",
       "rotate-half on HF-permuted W_q, W_k equals the permuted interleaved result; scores equal "
       "(seed 002)",
       SubjectKind::rope, layout_equivalence},
  };
  return kAll;
}

}  // namespace ropecheck
