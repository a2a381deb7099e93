// oracle_rope_form.h: QK-norm in long double, then the oracle's rotation.
#include "impls/oracle/oracle_rope_form.h"

#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {

std::vector<double> oracle_rms_norm(const QkNorm& norm, std::span<const float> weight, std::span<const float> head) {
  long double squares = 0;
  for (const float x : head) squares += static_cast<long double>(x) * x;
  const long double mean = squares / static_cast<long double>(head.size());
  const long double inverse_rms = 1.0L / std::sqrt(mean + static_cast<long double>(norm.eps));
  std::vector<double> out(head.size());
  for (std::size_t f = 0; f < head.size(); ++f) {
    const long double w = norm.weight == NormWeight::one_plus ? 1.0L + static_cast<long double>(weight[f])
                                                              : static_cast<long double>(weight[f]);
    out[f] = static_cast<double>(static_cast<long double>(head[f]) * inverse_rms * w);
  }
  return out;
}

NormRopeTruth oracle_norm_rope(const RopeSpec& spec, const QkNorm* norm, std::span<const float> weight,
                               std::span<const float> x, std::int64_t tokens, std::int64_t heads,
                               PositionIds positions) {
  NormRopeTruth truth;
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  if (norm == nullptr) {
    truth.normalized.assign(x.begin(), x.end());
    truth.rotated = oracle_rope(spec, x, tokens, heads, positions);
    return truth;
  }
  validate(*norm);
  if (weight.size() != dim) {
    throw InvalidInput(fmt::format("qk_norm: a weight of {} entries for head_dim {}", weight.size(), dim));
  }
  truth.normalized.resize(x.size());
  for (std::size_t row = 0; row + dim <= x.size(); row += dim) {
    const std::vector<double> head = oracle_rms_norm(*norm, weight, x.subspan(row, dim));
    std::copy(head.begin(), head.end(), truth.normalized.begin() + static_cast<std::ptrdiff_t>(row));
  }
  truth.rotated = oracle_rope(spec, std::span<const double>(truth.normalized), tokens, heads, positions);
  return truth;
}

}  // namespace ropecheck
