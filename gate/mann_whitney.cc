// Mann-Whitney U: U by counting pairs, the exact null distribution by counting arrangements, the
// normal approximation with tie correction, and Holm's adjustment. See mann_whitney.h.
#include "gate/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ropecheck {
namespace {

void check_sample(std::span<const double> sample, const char* which) {
  if (sample.empty()) throw std::invalid_argument(std::string("mann_whitney_u: empty ") + which);
  for (const double v : sample) {
    if (!std::isfinite(v)) {
      throw std::invalid_argument(std::string("mann_whitney_u: non-finite value in ") + which);
    }
  }
}

// sum(t^3 - t) over the groups of equal values in the pooled sample; 0 when all are distinct.
double tie_sum(std::span<const double> x, std::span<const double> y) {
  std::vector<double> pooled(x.begin(), x.end());
  pooled.insert(pooled.end(), y.begin(), y.end());
  std::sort(pooled.begin(), pooled.end());
  double sum = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j] == pooled[i]) ++j;
    const double t = static_cast<double>(j - i);
    sum += t * t * t - t;
    i = j;
  }
  return sum;
}

}  // namespace

std::vector<std::uint64_t> mann_whitney_exact_counts(int n1, int n2) {
  if (n1 < 1 || n2 < 1 || n1 > kMannWhitneyExactMax || n2 > kMannWhitneyExactMax) {
    throw std::invalid_argument("mann_whitney_exact_counts: sizes must be in 1.." +
                                std::to_string(kMannWhitneyExactMax));
  }
  // ways[i][j][u]: arrangements of i x's and j y's with U = u. The largest of the i + j values is
  // either an x, above all j y's (U gains j), or a y, above no x (U gains 0):
  //   ways[i][j][u] = ways[i-1][j][u-j] + ways[i][j-1][u].
  std::vector<std::vector<std::vector<std::uint64_t>>> ways(
      static_cast<std::size_t>(n1) + 1,
      std::vector<std::vector<std::uint64_t>>(static_cast<std::size_t>(n2) + 1));
  for (int i = 0; i <= n1; ++i) {
    for (int j = 0; j <= n2; ++j) {
      auto& w = ways[i][j];
      w.assign(static_cast<std::size_t>(i * j) + 1, 0);
      if (i == 0 || j == 0) {
        w[0] = 1;  // one arrangement, no pairs
        continue;
      }
      const auto& x_top = ways[i - 1][j];
      const auto& y_top = ways[i][j - 1];
      for (int u = 0; u <= i * j; ++u) {
        if (u - j >= 0 && u - j < static_cast<int>(x_top.size())) w[u] += x_top[u - j];
        if (u < static_cast<int>(y_top.size())) w[u] += y_top[u];
      }
    }
  }
  return ways[n1][n2];
}

double mann_whitney_exact_cdf(int n1, int n2, double u) {
  const auto counts = mann_whitney_exact_counts(n1, n2);
  // Without ties U is an integer; floor keeps P(U <= u) right for any u.
  const double top = std::floor(u);
  std::uint64_t below = 0, total = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    total += counts[k];
    if (static_cast<double>(k) <= top) below += counts[k];
  }
  return static_cast<double>(below) / static_cast<double>(total);
}

double mann_whitney_normal_cdf(int n1, int n2, double u, double tie_sum) {
  const double a = n1, b = n2, n = a + b;
  const double mean = a * b / 2;
  const double variance = a * b / 12 * ((n + 1) - tie_sum / (n * (n - 1)));
  if (!(variance > 0)) return 1;
  // +1/2: P(U <= u) of a lattice variable is the normal area up to u + 1/2 (U moves in steps
  // of 1/2 with ties, where the correction is conservative).
  const double z = (u + 0.5 - mean) / std::sqrt(variance);
  return std::min(1.0, 0.5 * std::erfc(-z / std::sqrt(2.0)));
}

MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y,
                                 Alternative alternative) {
  check_sample(x, "x");
  check_sample(y, "y");
  double u = 0;
  for (const double xi : x) {
    for (const double yj : y) u += xi > yj ? 1.0 : xi == yj ? 0.5 : 0.0;
  }
  const int n1 = static_cast<int>(x.size()), n2 = static_cast<int>(y.size());
  // "x higher" is "y lower": the same lower tail, of U_y = n1 n2 - U_x.
  const double u_tail = alternative == Alternative::less ? u : double(n1) * double(n2) - u;
  const double ties = tie_sum(x, y);
  MannWhitneyResult result;
  result.u = u;
  result.exact = n1 <= kMannWhitneyExactMax && n2 <= kMannWhitneyExactMax && ties == 0;
  result.p = result.exact ? mann_whitney_exact_cdf(n1, n2, u_tail)
                          : mann_whitney_normal_cdf(n1, n2, u_tail, ties);
  return result;
}

std::vector<double> holm_adjust(std::span<const double> p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;  // step-down: an adjusted p is never below the one before it
  for (std::size_t rank = 0; rank < m; ++rank) {
    const double scaled = std::min(1.0, static_cast<double>(m - rank) * p[order[rank]]);
    running = std::max(running, scaled);
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

}  // namespace ropecheck
