// One small RoPE call for the tests of outside implementations (plugins and Python callables):
// 4 tokens at positions {0, 7, 4096, -3}, 4 q heads and 2 k heads of smooth values, and the
// PluginFailure an apply of it throws (plugin_test, python_test).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "impls/oracle/oracle.h"
#include "impls/rope_impl.h"
#include "plugins/host/plugin_host.h"

namespace ropecheck::test {

struct Problem {
  RopeSpec spec;
  std::vector<float> q, k;
  std::vector<std::int64_t> positions;
  std::int64_t q_heads = 4, k_heads = 2;

  explicit Problem(int head_dim, Layout layout = Layout::half_split, int rotary_dim = 0) {
    spec.head_dim = head_dim;
    spec.rotary_dim = rotary_dim == 0 ? head_dim : rotary_dim;
    spec.layout = layout;
    positions = {0, 7, 4096, -3};
    q.resize(positions.size() * static_cast<std::size_t>(q_heads * head_dim));
    k.resize(positions.size() * static_cast<std::size_t>(k_heads * head_dim));
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(static_cast<float>(i) + 0.5f);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::cos(static_cast<float>(i) * 0.3f);
  }
  // axis_count(spec) positions a token (token-major): set spec.axes, then positions to match.
  std::int64_t tokens() const { return static_cast<std::int64_t>(positions.size()) / axis_count(spec); }
  void apply(const RopeImpl& impl) {
    const auto tokens = this->tokens();
    impl.apply(spec, HeadTensor{q, tokens, q_heads, spec.head_dim},
               HeadTensor{k, tokens, k_heads, spec.head_dim}, positions);
  }
};

// Applies impl to p and expects its q and k within 1e-5 of the float64 oracle's (the problem's
// values are smooth and of order 1: a correct fp32 rotation is far inside that).
inline void expect_matches_oracle(const RopeImpl& impl, Problem& p) {
  const auto tokens = p.tokens();
  const auto want_q = oracle_rope(p.spec, p.q, tokens, p.q_heads, p.positions);
  const auto want_k = oracle_rope(p.spec, p.k, tokens, p.k_heads, p.positions);
  p.apply(impl);
  for (std::size_t i = 0; i < p.q.size(); ++i) ASSERT_NEAR(p.q[i], want_q[i], 1e-5) << "q " << i;
  for (std::size_t i = 0; i < p.k.size(); ++i) ASSERT_NEAR(p.k[i], want_k[i], 1e-5) << "k " << i;
}

// The PluginFailure message of one apply, "" when it did not throw one; *hang set when it was a
// PluginHang.
inline std::string failure_of(const RopeImpl& impl, Problem problem, bool* hang = nullptr) {
  try {
    problem.apply(impl);
  } catch (const PluginHang& e) {
    if (hang != nullptr) *hang = true;
    return e.what();
  } catch (const PluginFailure& e) {
    return e.what();
  }
  return "";
}

}  // namespace ropecheck::test
