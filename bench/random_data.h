// Benchmark inputs: fixed-seed N(0, 1) floats, the same in every run, so that two runs of a case
// time the same data.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace ropecheck::bench {

inline std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace ropecheck::bench
