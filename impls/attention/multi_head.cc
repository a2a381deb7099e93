// Multi-head attention: projections by cblas_sgemm around an AttentionImpl (multi_head.h).
#include "impls/attention/multi_head.h"

#include <cblas.h>
#include <fmt/format.h>

#include <climits>

#include "core/errors.h"

namespace ropecheck {
namespace {

// Sizes are compared in double: a product that overflows int64 is simply not equal.
double product(double a, double b, double c = 1) { return a * b * c; }

void check_size(std::span<const float> x, double need, const char* what) {
  if (static_cast<double>(x.size()) != need) {
    throw InvalidInput(fmt::format("multi-head attention: {} holds {} floats, its shape needs {}",
                                   what, x.size(), need));
  }
}

}  // namespace

void validate(const MultiHeadWeights& w) {
  if (w.d_model <= 0 || w.q_heads <= 0 || w.kv_heads <= 0 || w.head_dim <= 0) {
    throw InvalidInput(fmt::format("multi-head attention: empty shape (d_model {}, {} q heads, {} "
                                   "kv heads, head_dim {})", w.d_model, w.q_heads, w.kv_heads,
                                   w.head_dim));
  }
  if (w.q_heads % w.kv_heads != 0) {
    throw InvalidInput(fmt::format("multi-head attention: {} q heads is not a multiple of {} kv "
                                   "heads", w.q_heads, w.kv_heads));
  }
  check_size(w.w_q, product(w.d_model, w.q_heads, w.head_dim), "w_q ([d_model][q_heads*head_dim])");
  check_size(w.w_k, product(w.d_model, w.kv_heads, w.head_dim), "w_k ([d_model][kv_heads*head_dim])");
  check_size(w.w_v, product(w.d_model, w.kv_heads, w.head_dim), "w_v ([d_model][kv_heads*head_dim])");
  check_size(w.w_o, product(w.q_heads, w.head_dim, w.d_model), "w_o ([q_heads*head_dim][d_model])");
}

namespace {

// Dimensions and inputs; cblas takes int dimensions and leading dimensions.
void validate_projection(std::span<const float> x, std::span<const float> w, std::int64_t rows,
                         std::int64_t inner, std::int64_t cols) {
  for (const std::int64_t n : {rows, inner, cols}) {
    if (n <= 0 || n > INT_MAX) {
      throw InvalidInput(fmt::format("project: dimensions {} x {} x {} must be in [1, {}]", rows,
                                     inner, cols, INT_MAX));
    }
  }
  check_size(x, product(static_cast<double>(rows), static_cast<double>(inner)), "x ([rows][inner])");
  check_size(w, product(static_cast<double>(inner), static_cast<double>(cols)), "w ([inner][cols])");
}

}  // namespace

void project(std::span<const float> x, std::span<const float> w, std::int64_t rows,
             std::int64_t inner, std::int64_t cols, std::span<float> out) {
  validate_projection(x, w, rows, inner, cols);
  check_size(out, product(static_cast<double>(rows), static_cast<double>(cols)), "out ([rows][cols])");
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows),
              static_cast<int>(cols), static_cast<int>(inner), 1.0f, x.data(),
              static_cast<int>(inner), w.data(), static_cast<int>(cols), 0.0f, out.data(),
              static_cast<int>(cols));
}

std::vector<float> project(std::span<const float> x, std::span<const float> w, std::int64_t rows,
                           std::int64_t inner, std::int64_t cols) {
  validate_projection(x, w, rows, inner, cols);  // before allocating rows x cols
  std::vector<float> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  project(x, w, rows, inner, cols, out);
  return out;
}

PositionalEncoding no_positions() { return {}; }

PositionalEncoding absolute_positions(std::span<const float> table, PositionIds positions) {
  PositionalEncoding p;
  p.kind = PositionalKind::absolute;
  p.positions = positions;
  p.table = table;
  return p;
}

PositionalEncoding rotary_positions(const RopeSpec& rope, PositionIds positions) {
  PositionalEncoding p;
  p.kind = PositionalKind::rotary;
  p.positions = positions;
  p.rope = rope;
  return p;
}

namespace {

// Token t gets table row positions[t]; validates the table and the positions first.
std::vector<float> add_absolute_positions(std::span<const float> x, std::int64_t tokens,
                                          int d_model, const PositionalEncoding& p) {
  const auto row = static_cast<std::size_t>(d_model);
  if (p.table.empty() || p.table.size() % row != 0) {
    throw InvalidInput(fmt::format("multi-head attention: the position table holds {} floats, not "
                                   "a whole number of d_model {} rows", p.table.size(), d_model));
  }
  const auto table_rows = static_cast<std::int64_t>(p.table.size() / row);
  std::vector<float> out(x.begin(), x.end());
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t pos = p.positions[static_cast<std::size_t>(t)];
    if (pos < 0 || pos >= table_rows) {
      throw InvalidInput(fmt::format("multi-head attention: token {} has position {}, outside the "
                                     "table's rows [0, {})", t, pos, table_rows));
    }
    for (std::size_t c = 0; c < row; ++c) {
      out[static_cast<std::size_t>(t) * row + c] += p.table[static_cast<std::size_t>(pos) * row + c];
    }
  }
  return out;
}

}  // namespace

std::vector<float> multi_head_attention(const MultiHeadWeights& w, std::span<const float> x,
                                        std::int64_t tokens, const PositionalEncoding& positional,
                                        const AttentionImpl& attention, bool causal) {
  validate(w);
  if (tokens <= 0) throw InvalidInput(fmt::format("multi-head attention: {} tokens", tokens));
  check_size(x, product(static_cast<double>(tokens), w.d_model), "x ([tokens][d_model])");
  const bool positioned = positional.kind != PositionalKind::none;
  if (positional.positions.size() != (positioned ? static_cast<std::size_t>(tokens) : 0)) {
    throw InvalidInput(fmt::format("multi-head attention: {} positions for {} tokens{}",
                                   positional.positions.size(), tokens,
                                   positioned ? "" : " without positional encoding"));
  }
  if (positional.kind != PositionalKind::absolute && !positional.table.empty()) {
    throw InvalidInput("multi-head attention: a position table given for non-absolute positions");
  }
  if (positional.kind == PositionalKind::rotary) {
    validate(positional.rope);
    if (positional.rope.head_dim != w.head_dim) {
      throw InvalidInput(fmt::format("multi-head attention: RoPE head_dim {} is not the weights' "
                                     "head_dim {}", positional.rope.head_dim, w.head_dim));
    }
  }
  // Absolute encodings enter the residual stream, before every projection (seed 001's x + PE).
  const std::vector<float> with_positions =
      positional.kind == PositionalKind::absolute
          ? add_absolute_positions(x, tokens, w.d_model, positional)
          : std::vector<float>(x.begin(), x.end());
  const std::int64_t q_width = std::int64_t{w.q_heads} * w.head_dim;
  const std::int64_t kv_width = std::int64_t{w.kv_heads} * w.head_dim;
  const auto q = project(with_positions, w.w_q, tokens, w.d_model, q_width);
  const auto k = project(with_positions, w.w_k, tokens, w.d_model, kv_width);
  const auto v = project(with_positions, w.w_v, tokens, w.d_model, kv_width);
  const AttentionShape shape{tokens, w.q_heads, w.kv_heads, w.head_dim, causal};
  // [tokens][q_heads][head_dim] is already the concatenation of the heads per token.
  std::vector<float> heads(q.size());
  attention.run(shape, positional.kind == PositionalKind::rotary ? &positional.rope : nullptr,
                positional.positions, q, k, v, heads);
  return project(heads, w.w_o, tokens, q_width, w.d_model);
}

}  // namespace ropecheck
