// The one-sided Mann-Whitney U test and Holm's correction, as pure functions: the statistics
// behind `ropecheck compare` (compare_command.cc), checked against enumerated and hand-derived
// values in tests/gate/compare_test.cc.
//   build/tests/gate_tests --gtest_filter='MannWhitney*'
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ropecheck {

// H1 of the one-sided test: x tends to be lower (less) or higher (greater) than y.
enum class Alternative { less, greater };

struct MannWhitneyResult {
  double u = 0;        // U of x: pairs (x_i, y_j) with x_i > y_j, a tie counting 1/2
  double p = 1;        // one-sided p-value for the alternative
  bool exact = false;  // exact null distribution; false: normal approximation
};

// Exact when both sizes are <= kMannWhitneyExactMax and the pooled sample has no tie (the exact
// distribution assumes distinct values); otherwise the normal approximation with tie and
// continuity corrections. Throws std::invalid_argument for an empty sample or a non-finite value.
MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y,
                                 Alternative alternative);

// Sizes up to which the exact distribution is used (C(40, 20) ~ 1.4e11 arrangements: counts stay
// exact in 64 bits and the table is 21 x 21 x 401 entries).
inline constexpr int kMannWhitneyExactMax = 20;

// P(U <= u) under H0 for samples of n1 and n2 distinct values, from the number of arrangements
// with each U (dynamic programming, exact). 1 <= n1, n2 <= kMannWhitneyExactMax.
double mann_whitney_exact_cdf(int n1, int n2, double u);

// The number of arrangements of n1 x's and n2 y's with U = 0..n1*n2 (index = U).
std::vector<std::uint64_t> mann_whitney_exact_counts(int n1, int n2);

// P(U <= u) by the normal approximation: mean n1 n2 / 2, variance
// n1 n2 / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))) over the pooled tie groups of sizes t,
// continuity correction +1/2. `tie_sum` is sum(t^3 - t). A zero variance (every value equal)
// gives 1: no evidence either way.
double mann_whitney_normal_cdf(int n1, int n2, double u, double tie_sum);

// Holm's step-down adjusted p-values, in the input's order: the i-th smallest p times (m - i + 1),
// made monotone and capped at 1. Rejecting where adjusted p < alpha controls the family-wise error
// rate at alpha under any dependence, like Bonferroni, and never rejects less than it.
std::vector<double> holm_adjust(std::span<const double> p);

}  // namespace ropecheck
