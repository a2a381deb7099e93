// How the RoPE-sized cases walk q and k: each benchmark thread on its own contiguous share of the
// tokens, and the same-run probe over the same bytes, token by token (q's heads, then k's), as
// RoPE walks them. Shared by the RoPE cases and the 16-bit conversion ceilings.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ropecheck::bench {

// This benchmark thread's contiguous share of the tokens: threads never touch the same rows.
struct TokenRange {
  std::int64_t first, count;
};
TokenRange my_tokens(const benchmark::State& state, std::int64_t tokens);

// The rows of tokens `r` of x, a [tokens][row] buffer.
template <typename Element>
std::span<Element> token_rows(std::span<Element> x, std::int64_t row, TokenRange r) {
  return x.subspan(static_cast<std::size_t>(r.first * row), static_cast<std::size_t>(r.count * row));
}

// A bf16 or fp16 buffer seen as floats for the probe: the same bytes (sizes are even). Scaling
// by -1 only flips the sign bit of every other element: the float's exponent bits come from a
// finite element's, so it is never a NaN, the data stays finite and two passes restore it.
template <typename Element>
std::span<float> as_floats(std::span<Element> x) {
  static_assert(sizeof(Element) == 2, "bf16 or fp16 elements");
  return {reinterpret_cast<float*>(x.data()), x.size() / 2};
}
inline std::span<float> as_floats(std::span<float> x) { return x; }

// The probe's walk over q and k of `tokens` tokens (token by token: q's heads, then k's): two
// streams in flight, which out of cache is faster than one buffer after the other. Groups of
// tokens of at least 16 KiB of q keep the per-call cost out of the measurement:
// visit(q's part, k's part) for each group, in order.
template <typename Element, typename Visit>
void walk_token_groups(std::span<Element> q, std::span<Element> k, std::int64_t tokens, Visit visit) {
  const auto n_tokens = static_cast<std::size_t>(tokens);
  const std::size_t q_token = q.size() / n_tokens, k_token = k.size() / n_tokens;
  const std::size_t group = std::max<std::size_t>(1, 16384 / (q_token * sizeof(Element)));
  for (std::size_t t = 0; t < n_tokens; t += group) {
    const std::size_t n = std::min(group, n_tokens - t);
    visit(q.subspan(t * q_token, n * q_token), k.subspan(t * k_token, n * k_token));
  }
}

// The in-place probe x = -x over q and k (as floats), walked as above.
void probe_pass(std::span<float> q, std::span<float> k, std::int64_t tokens);

}  // namespace ropecheck::bench
