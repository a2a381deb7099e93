// Boundary shapes (see boundary_cases.h).
#include "properties/harness/boundary_cases.h"

#include "properties/harness/axis_generators.h"
#include "properties/harness/model_shape_cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ropecheck {

std::string_view to_string(BoundaryShape shape) {
  switch (shape) {
    case BoundaryShape::one_token_many_heads: return "one_token_many_heads";
    case BoundaryShape::many_tokens_one_head: return "many_tokens_one_head";
    case BoundaryShape::rows_past_65536: return "rows_past_65536";
    case BoundaryShape::model_head_dims: return "model_head_dims";
    case BoundaryShape::positions_near_max: return "positions_near_max";
    case BoundaryShape::large_bases: return "large_bases";
  }
  return "?";
}

void showValue(BoundaryShape shape, std::ostream& os) { os << to_string(shape); }

namespace {

// An odd count in [lo, hi] (lo odd).
std::int64_t odd_count(std::int64_t lo, std::int64_t hi, const char* name) {
  return lo + 2 * *rc::gen::inRange<std::int64_t>(0, (hi - lo) / 2 + 1).as(fmt::format("{} (odd, {} + 2 x this)", name, lo));
}

// d itself, or with partial rotary an even rotary_dim < d whose half is not a power of two
// (3, 5, 6, 7, 9, ... pairs: no vector width divides them).
int rotary_dim_for(const RopeCapabilities& caps, int d) {
  if (!caps.partial_rotary || *rc::gen::inRange(0, 2).as("partial rotary (1: yes)") == 0) return d;
  std::vector<int> halves;
  for (int h = 3; h < d / 2; ++h) {
    if ((h & (h - 1)) != 0) halves.push_back(h);
  }
  if (halves.empty()) return d;
  return 2 * *rc::gen::elementOf(halves).as("rotary pairs");
}

// The spec with another head_dim and rotary_dim, its scaling drawn again for them (LongRoPE's
// lists have rotary_dim/2 entries).
void reshape(const RopeCapabilities& caps, RopeSpec& spec, int d, int r) {
  spec.head_dim = d;
  spec.rotary_dim = r;
  spec.scaling = *rope_scaling(caps, r).as("scaling (for the new head_dim)");
  spec.axes = *position_axes(caps, r, spec.scaling.kind != ScalingKind::none).as("axes (for the new head_dim)");
}

// offset, offset + 1, ...: every token its own position, so a row given another row's token
// is rotated by the wrong angle.
std::vector<std::int64_t> contiguous_positions(std::int64_t count, std::int64_t limit) {
  if (limit < count - 1) return *position_ids(static_cast<std::size_t>(count), limit).as("positions");
  const std::int64_t offset = *rc::gen::inRange<std::int64_t>(0, limit - count + 2).as("first position");
  std::vector<std::int64_t> p(static_cast<std::size_t>(count));
  for (std::int64_t t = 0; t < count; ++t) p[static_cast<std::size_t>(t)] = offset + t;
  return p;
}

}  // namespace

QkCase pick_boundary_case(const RopeCapabilities& caps, BoundaryShape shape) {
  // At a real model shape's case the model's shape is the boundary (model_shape_cases.h).
  if (model_shape_in_force() != nullptr) return pick_qk_case(caps, Rotary::any);
  QkCase c;
  c.spec = *rope_spec(caps, Rotary::any).as("spec");
  c.storage = caps.storage;
  c.tokens = *rc::gen::inRange<std::int64_t>(1, 9).as("tokens");
  c.k_heads = *rc::gen::inRange<std::int64_t>(1, 4).as("kv_heads");
  c.q_heads = c.k_heads * *rc::gen::inRange<std::int64_t>(1, 4).as("q heads per kv head");
  const std::int64_t limit = position_limit(caps);
  switch (shape) {
    case BoundaryShape::one_token_many_heads:
      c.tokens = 1;
      c.k_heads = *rc::gen::inRange<std::int64_t>(1, 9).as("kv_heads (one token)");
      c.q_heads = c.k_heads * *rc::gen::inRange<std::int64_t>(1, 9).as("q heads per kv head (one token)");
      break;
    case BoundaryShape::many_tokens_one_head:
      c.tokens = odd_count(65, 1025, "tokens");
      c.q_heads = c.k_heads = 1;
      break;
    case BoundaryShape::rows_past_65536: {
      // Heads of one or two pairs: the row count, not the bytes, is what a narrow row index
      // wraps on, and 2^16 rows of them cost a few hundred thousand values a call.
      const int d = 2 * *rc::gen::inRange(1, std::min(4, caps.max_head_dim) / 2 + 1).as("head pairs");
      reshape(caps, c.spec, d, d);
      // Several heads a token: fewer distinct positions for the oracle's long-double sin/cos.
      c.q_heads = *rc::gen::element<std::int64_t>(8, 32).as("heads (rows past 65536)");
      c.k_heads = *rc::gen::element<std::int64_t>(1, (c.q_heads + 7) / 8).as("kv_heads (rows past 65536)");
      c.tokens = (std::int64_t{1} << 16) / c.q_heads + 1 +
                 *rc::gen::inRange<std::int64_t>(0, 8).as("tokens past 65536 rows");
      if (axis_count(c.spec) == 1) c.positions = contiguous_positions(c.tokens, limit);
      break;
    }
    case BoundaryShape::model_head_dims: {
      std::vector<int> dims;
      for (const int d : {64, 72, 80, 96, 128, 256}) {
        if (d <= caps.max_head_dim) dims.push_back(d);
      }
      if (!dims.empty()) {
        const int d = *rc::gen::elementOf(dims).as("head_dim (a model's)");
        reshape(caps, c.spec, d, rotary_dim_for(caps, d));
      }
      c.tokens = odd_count(1, 17, "tokens");
      break;
    }
    case BoundaryShape::positions_near_max: {
      // A single rotation per call here, so the whole declared range (no room kept for sums).
      const std::int64_t max = std::min(caps.max_position, kMaxAbsPosition);
      c.tokens = odd_count(1, 9, "tokens");
      c.positions.resize(static_cast<std::size_t>(c.tokens * axis_count(c.spec)));
      for (auto& m : c.positions) {
        const std::int64_t magnitude =
            std::max<std::int64_t>(0, max - *rc::gen::inRange<std::int64_t>(0, 65).as("position below the max by"));
        m = *rc::gen::arbitrary<bool>().as("position negative") ? -magnitude : magnitude;
      }
      break;
    }
    case BoundaryShape::large_bases:
      c.spec.base = *rc::gen::weightedOneOf<double>(
                         {{1, rc::gen::element(1e4, 5e5, 1e6, 1e7)},
                          {2, rc::gen::map(rc::gen::inRange(0, 1 << 20), [](int u) {
                             return std::pow(10.0, 4.0 + 3.0 * static_cast<double>(u) / (1 << 20));
                           })}})
                         .as("base");
      break;
  }
  if (c.positions.empty()) {
    c.positions = *token_positions(c.spec, static_cast<std::size_t>(c.tokens), limit).as("positions");
  }
  // pick_tensor draws a large tensor (rows_past_65536's million values) from a seed.
  c.q = pick_tensor(c.spec, c.tokens, c.q_heads, c.storage, "q");
  c.k = pick_tensor(c.spec, c.tokens, c.k_heads, c.storage, "k");
  round_to_storage(c.q, c.storage);
  round_to_storage(c.k, c.storage);
  return c;
}

}  // namespace ropecheck
