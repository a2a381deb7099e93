// Benchmark inputs: fixed-seed N(0, 1) floats, the same in every run, so that two runs of a case
// time the same data.
#pragma once

#include <algorithm>
#include <cstddef>
#include <random>
#include <span>
#include <vector>

namespace ropecheck::bench {

// Past this many values the drawn block repeats. The kernels' speed does not depend on the
// values (no data-dependent branch, and N(0, 1) inputs make no subnormals), while drawing every
// value took 0.85 s of each process on an out-of-cache shape (2 x 16.8M normals), which the
// gate pays in every one of its many short processes.
inline constexpr std::size_t kDistinctFloats = std::size_t{1} << 20;

inline std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  const std::size_t drawn = std::min(n, kDistinctFloats);
  for (std::size_t i = 0; i < drawn; ++i) v[i] = dist(rng);
  for (std::size_t i = drawn; i < n; i += drawn) {
    std::copy_n(v.begin(), std::min(drawn, n - i), v.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return v;
}

// out[i] = convert(random_floats(out.size(), seed)[i]), written straight into `out` (a benchmark
// buffer of up to 64 MiB: no temporary of its size to fault in and free in every process).
template <typename T, typename Convert>
void fill_random(std::span<T> out, unsigned seed, Convert convert) {
  const auto block = random_floats(std::min(out.size(), kDistinctFloats), seed);
  for (std::size_t i = 0; i < out.size(); i += block.size()) {
    const std::size_t n = std::min(block.size(), out.size() - i);
    std::transform(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(n), out.begin() + static_cast<std::ptrdiff_t>(i), convert);
  }
}

}  // namespace ropecheck::bench
