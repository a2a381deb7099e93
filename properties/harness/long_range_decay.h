// Seed 004's long-range decay, stated so that it holds where the seed says it does and fails on
// its counter-examples.
//
// With q = k = ones, <R_m q, R_n k> = score(x) = 2 * sum_i cos(x * theta_i), x = n - m. The seed
// bounds the decaying range by x < (pi/2) * 10^(4 - 8/d). The envelope is NOT monotone for every
// d: measured on dyadic windows W_k = [2^k, 2^(k+1)), E_k = max |score| over W_k, d = 64 rises
// once (E over [4096, 8192) is 21.12 vs 21.05 over [2048, 4096)). So the statement is:
//   over the windows that lie wholly below the bound,
//   (a) no window's envelope exceeds the largest envelope of the windows before it, and
//   (b) the last window's envelope is at most half the first's: a real decay, not boundedness.
// Measured: holds for d = 64, 128, 256 (base 10000); fails for theta_i = 0 (score constant d:
// (b)), theta_i = 1 (d cos x, periodic: (a) and (b)), d = 4 ((a): window [4,8) reaches 3.92 > 3.08)
// and also d = 8..32, where the envelope falls by less than half inside the bound.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ropecheck {

// (pi/2) * 10^(4 - 8/d): seed 004's bound for base 10000.
double long_range_decay_bound(int d);

// 2 * sum_i cos(x * theta_i) for x = 0..x_max, in double (the formula, no implementation).
std::vector<double> ones_score(std::span<const double> theta, std::int64_t x_max);

struct DecayVerdict {
  bool holds = false;
  double margin = 0.0;  // max of E_k / max_{j<k} E_j and E_last / (E_first / 2): <= 1 when it holds
  std::vector<double> window_max;  // E_k for the windows used
  std::string reason;              // the clause that failed, with the numbers
};

// score[x] for x = 0..; windows [2^k, 2^(k+1)) for k >= 0 with 2^(k+1) <= min(bound, size).
DecayVerdict long_range_decay(std::span<const double> score, double bound);

}  // namespace ropecheck
