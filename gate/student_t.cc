// student_t_cdf() and student_t_quantile() (student_t.h). The series for A(t|df) = P(|T| <= t):
//   df odd:  A = (2/pi) (theta + sin(theta) (cos + 2/3 cos^3 + ... + (2*4*..*(df-3))/(1*3*..*(df-2)) cos^(df-2)))
//   df even: A = sin(theta) (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ... + (1*3*..*(df-3))/(2*4*..*(df-2)) cos^(df-2))
// with theta = atan(t / sqrt(df)); at most df/2 terms, each smaller than the last.
#include "gate/student_t.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace ropecheck {
namespace {

// A(t|df) = P(|T| <= |t|).
double central_probability(double t, int df) {
  const double theta = std::atan(std::abs(t) / std::sqrt(static_cast<double>(df)));
  const double c = std::cos(theta), s = std::sin(theta);
  if (df % 2 == 0) {
    double term = 1, sum = 1;
    for (int k = 2; k <= df - 2; k += 2) {
      term *= c * c * (k - 1) / k;
      sum += term;
    }
    return s * sum;
  }
  if (df == 1) return 2 * theta / std::numbers::pi;
  double term = c, sum = c;
  for (int k = 3; k <= df - 2; k += 2) {
    term *= c * c * (k - 1) / k;
    sum += term;
  }
  return 2 / std::numbers::pi * (theta + s * sum);
}

}  // namespace

double student_t_cdf(double t, int df) {
  if (df < 1) throw std::invalid_argument("student_t_cdf: df must be >= 1");
  if (std::isnan(t)) throw std::invalid_argument("student_t_cdf: t is NaN");
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  const double a = central_probability(t, df);
  return t >= 0 ? 0.5 + a / 2 : 0.5 - a / 2;
}

double student_t_quantile(double p, int df) {
  if (df < 1) throw std::invalid_argument("student_t_quantile: df must be >= 1");
  if (!(p > 0 && p < 1)) throw std::invalid_argument("student_t_quantile: p must be in (0, 1)");
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  // The CDF is increasing: bracket, then bisect (60 halvings of a bracket below 2^40 suffice).
  double low = 0, high = 1;
  while (student_t_cdf(high, df) < p) {
    low = high;
    high *= 2;
  }
  for (int i = 0; i < 200 && high - low > 1e-13 * high; ++i) {
    const double mid = (low + high) / 2;
    (student_t_cdf(mid, df) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

}  // namespace ropecheck
