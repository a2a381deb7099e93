// The statistics the report prints: medians of per-repetition samples, and a percentile-bootstrap
// confidence interval for the ratio of two medians (current / baseline run of one case).
//   const auto ci = bootstrap_median_ratio(current.limit_fraction, base.limit_fraction);
#pragma once

#include <cstdint>
#include <span>

namespace ropecheck {

inline constexpr int kBootstrapResamples = 2000;
inline constexpr std::uint64_t kBootstrapSeed = 20240601;  // fixed: a report re-renders identically

// The median (mean of the middle two for an even count); NaN for no samples.
double median(std::span<const double> samples);

struct RatioInterval {
  double ratio = 0;       // median(current) / median(baseline)
  double low = 0, high = 0;  // 2.5th and 97.5th percentiles of the resampled ratios
};

// Resamples each side with replacement (sizes kept), `resamples` times, with a fixed-seed
// generator. Both spans must be non-empty.
RatioInterval bootstrap_median_ratio(std::span<const double> current, std::span<const double> baseline,
                                     int resamples = kBootstrapResamples,
                                     std::uint64_t seed = kBootstrapSeed);

}  // namespace ropecheck
