// The float64 multi-head reference and the bound on an fp32 layer's distance from it
// (multi_head_cases.h). Error model, u = 2^-24, gamma_n = n u / (1 - n u), |.| elementwise,
// ||.|| the 2-norm of one (token, head) vector, starred values exact on the fp32 inputs:
//  1. Positions: X^ = fl(X + PE), |X^ - X*| <= a |X*|, a = u for an absolute table, else 0.
//  2. Projections (sgemm: any summation order, FMA or not): |Q^ - Q*| <= dQ elementwise,
//     dQ = (gamma_dm (1 + a) + a) |X*| |W_q|; K and V likewise.
//  3. RoPE: the exact rotation keeps ||dQ||; the fp32 kernel (fp64 angles) moves each pair by
//     <= kNormBoundUnits eps32 |pair| (tolerance.h), so e_q = ||dQ|| + kNormBoundUnits eps32
//     (||q*|| + ||dQ||) bounds ||q^ - q*|| per (token, head); without RoPE e_q = ||dQ||.
//  3b. K and V kept narrower (an F16 KV cache): each element rounded once more, by at most
//     u_s max(|x|, n_min) (tolerance.h storage_rounding_error), so e_k grows by u_s (||k*|| + e_k)
//     + u_s n_min sqrt(d) and dV by u_s (|v*| + dV) + u_s n_min; fp32 K and V: nothing.
//  4. Scores s = scale <q, k>: the sgemm with alpha = fl(scale) makes d + 2 roundings, so
//     |s^ - scale <q^, k^>| <= gamma_(d+2) scale ||q^|| ||k^|| (Cauchy-Schwarz), and
//     scale |<q^, k^> - <q*, k*>| <= scale (e_q ||k^|| + ||q*|| e_k), with ||q^|| <= ||q*|| + e_q:
//     ds_ij = scale (gamma_(d+2) (||q*|| + e_q)(||k*|| + e_k) + e_q (||k*|| + e_k) + ||q*|| e_k).
//  5. Softmax (subtract the max, expf within 1 ulp = 2u, sum, 1/sum, product): fl(s^_j - max)
//     moves the exponent by <= u (max s* - s*_j + 2 max ds), so the weights are an exact softmax
//     of scores within D_i = max_j (ds_ij + that) of s*, times roundings in
//     (1 +- 2u)(1 +- gamma_2) / ((1 -+ 2u)(1 -+ gamma_T)): |p^ - p*| <= E_i p*, with
//     E_i = expm1(2 D_i)(1 + r) + r, r = (1 + 2u)(1 + gamma_2) / ((1 - 2u)(1 - gamma_T)) - 1.
//     An exponential below 2^-126 is subnormal and only absolutely accurate: + 2^-148 per weight.
//  6. O = P V (sgemm over <= T keys): |O^ - O*| <= dO = sum_j ((E_i + gamma_T (1 + E_i)) p*_ij
//     + (1 + gamma_T) 2^-148) (|v*_j| + dV_j) + p*_ij dV_j. attention_naive (double sums, one
//     final rounding u |O| <= gamma_T sum_j p^_ij |v^_j|) is inside the same bound.
//  7. Output (sgemm over q_heads * head_dim = n): |Y^ - Y*| <= sum_f (gamma_n (|O*_f| + dO_f) +
//     dO_f) |W_o[f]|.
//  8. The reference makes the same kinds of roundings in double (u = 2^-53; long double angles),
//     so its own error is below 2^-27 of this bound: the bound is scaled by 1 + 2^-26.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/harness/multi_head_cases.h"
#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

constexpr double kTinyWeight = 0x1p-148;  // a subnormal exponential's absolute error (step 5)
constexpr double kReferenceSlack = 1 + 0x1p-26;  // step 8

// out = x w and abs_out = |x| |w| in double, row-major [rows][inner] x [inner][cols].
void matmul(const std::vector<double>& x, std::span<const float> w, std::size_t rows,
            std::size_t inner, std::size_t cols, std::vector<double>& out,
            std::vector<double>& abs_out) {
  out.assign(rows * cols, 0.0);
  abs_out.assign(rows * cols, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < inner; ++i) {
      const double a = x[r * inner + i];
      for (std::size_t c = 0; c < cols; ++c) {
        out[r * cols + c] += a * w[i * cols + c];
        abs_out[r * cols + c] += std::abs(a * w[i * cols + c]);
      }
    }
  }
}

// Rotates every (token, head) vector of x [tokens][heads][d] exactly (long double angles).
void rotate(const RopeSpec& spec, std::span<const std::int64_t> positions, std::size_t heads,
            std::vector<double>& x) {
  const auto theta = oracle_inverse_frequencies(spec);
  const auto d = static_cast<std::size_t>(spec.head_dim);
  const std::size_t pairs = theta.size(), half = static_cast<std::size_t>(spec.rotary_dim / 2);
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::size_t i = 0; i < pairs; ++i) {
      const long double angle = static_cast<long double>(positions[t]) * theta[i];
      const double c = static_cast<double>(std::cos(angle)), s = static_cast<double>(std::sin(angle));
      const std::size_t a = spec.layout == Layout::interleaved ? 2 * i : i;
      const std::size_t b = spec.layout == Layout::interleaved ? 2 * i + 1 : i + half;
      for (std::size_t h = 0; h < heads; ++h) {
        double* v = &x[(t * heads + h) * d];
        const double xa = v[a], xb = v[b];
        v[a] = c * xa - s * xb;
        v[b] = s * xa + c * xb;
      }
    }
  }
}

// The 2-norm of each (token, head) vector of [tokens * heads][d].
std::vector<double> norms(const std::vector<double>& x, std::size_t d) {
  std::vector<double> out(x.size() / d);
  for (std::size_t r = 0; r < out.size(); ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < d; ++c) sum += x[r * d + c] * x[r * d + c];
    out[r] = std::sqrt(sum);
  }
  return out;
}

}  // namespace

MultiHeadReference multi_head_reference(const MultiHeadWeights& w, std::span<const float> x,
                                        std::int64_t tokens, const PositionalEncoding& positional,
                                        bool causal, StorageType kv) {
  validate(w);
  const auto dm = static_cast<std::size_t>(w.d_model), d = static_cast<std::size_t>(w.head_dim);
  const auto T = static_cast<std::size_t>(tokens);
  const auto H = static_cast<std::size_t>(w.q_heads), G = static_cast<std::size_t>(w.kv_heads);
  const bool absolute = positional.kind == PositionalKind::absolute;
  const bool rotary = positional.kind == PositionalKind::rotary;
  if (tokens <= 0 || x.size() != T * dm ||
      (positional.kind != PositionalKind::none && positional.positions.size() != T)) {
    throw InvalidInput(fmt::format("multi-head reference: {} floats and {} positions for {} tokens "
                                   "of d_model {}", x.size(), positional.positions.size(), tokens, dm));
  }

  // 1. X* = X + PE, exact in double for the values the cases use.
  std::vector<double> xs(x.begin(), x.end());
  if (absolute) {
    for (std::size_t t = 0; t < T; ++t) {
      const std::int64_t pos = positional.positions[t];
      if (pos < 0 || static_cast<std::size_t>(pos) >= positional.table.size() / dm) {
        throw InvalidInput(fmt::format("multi-head reference: position {} outside the table", pos));
      }
      const auto row = static_cast<std::size_t>(pos);
      for (std::size_t c = 0; c < dm; ++c) xs[t * dm + c] += positional.table[row * dm + c];
    }
  }
  // 2. Projections and their elementwise bounds.
  std::vector<double> q, k, v, dq, dk, dv;
  matmul(xs, w.w_q, T, dm, H * d, q, dq);
  matmul(xs, w.w_k, T, dm, G * d, k, dk);
  matmul(xs, w.w_v, T, dm, G * d, v, dv);
  const double a = absolute ? kUnitRoundoff32 : 0.0;
  const double projection = gamma32(static_cast<double>(dm)) * (1 + a) + a;
  for (auto* e : {&dq, &dk, &dv}) {
    for (double& y : *e) y *= projection;
  }
  // 3. Norms (a rotation keeps them) and the per-vector errors of the attention's inputs.
  const auto nq = norms(q, d), nk = norms(k, d), ndq = norms(dq, d), ndk = norms(dk, d);
  const double rope_units = rotary ? kNormBoundUnits * kEps32 : 0.0;
  std::vector<double> eq(nq.size()), ek(nk.size());
  for (std::size_t r = 0; r < eq.size(); ++r) eq[r] = ndq[r] + rope_units * (nq[r] + ndq[r]);
  for (std::size_t r = 0; r < ek.size(); ++r) ek[r] = ndk[r] + rope_units * (nk[r] + ndk[r]);
  if (const double us = storage_unit_roundoff(kv); us > 0) {  // 3b.
    const double floor = us * storage_min_normal(kv);
    for (std::size_t r = 0; r < ek.size(); ++r) ek[r] += us * (nk[r] + ek[r]) + floor * std::sqrt(static_cast<double>(d));
    for (std::size_t j = 0; j < dv.size(); ++j) dv[j] += us * (std::abs(v[j]) + dv[j]) + floor;
  }
  if (rotary) {
    rotate(positional.rope, positional.positions, H, q);
    rotate(positional.rope, positional.positions, G, k);
  }

  // 4-6. Attention per q head and query row.
  const double scale = 1 / std::sqrt(static_cast<double>(d));
  const double g_scores = gamma32(static_cast<double>(d + 2)), g_keys = gamma32(static_cast<double>(T));
  const double r = (1 + 2 * kUnitRoundoff32) * (1 + gamma32(2)) / ((1 - 2 * kUnitRoundoff32) * (1 - g_keys)) - 1;
  std::vector<double> o(T * H * d), d_o(T * H * d);
  std::vector<double> s(T), ds(T), p(T);
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t kvh = h / (H / G);
    for (std::size_t i = 0; i < T; ++i) {
      const std::size_t visible = causal ? i + 1 : T, qi = i * H + h;
      double max = -INFINITY, max_ds = 0;
      for (std::size_t j = 0; j < visible; ++j) {
        const std::size_t kj = j * G + kvh;
        double dot = 0;
        for (std::size_t c = 0; c < d; ++c) dot += q[qi * d + c] * k[kj * d + c];
        s[j] = scale * dot;
        ds[j] = scale * (g_scores * (nq[qi] + eq[qi]) * (nk[kj] + ek[kj]) +
                         eq[qi] * (nk[kj] + ek[kj]) + nq[qi] * ek[kj]);
        max = std::max(max, s[j]);
        max_ds = std::max(max_ds, ds[j]);
      }
      double sum = 0, D = 0;
      for (std::size_t j = 0; j < visible; ++j) {
        p[j] = std::exp(s[j] - max);
        sum += p[j];
        D = std::max(D, ds[j] + kUnitRoundoff32 * (max - s[j] + 2 * max_ds));
      }
      const double E = std::expm1(2 * D) * (1 + r) + r;
      for (std::size_t c = 0; c < d; ++c) {
        double acc = 0, err = 0;
        for (std::size_t j = 0; j < visible; ++j) {
          const double pj = p[j] / sum, vj = v[(j * G + kvh) * d + c], dvj = dv[(j * G + kvh) * d + c];
          acc += pj * vj;
          err += ((E + g_keys * (1 + E)) * pj + (1 + g_keys) * kTinyWeight) * (std::abs(vj) + dvj) + pj * dvj;
        }
        o[qi * d + c] = acc;
        d_o[qi * d + c] = err;
      }
    }
  }

  // 7. The output projection of the merged heads.
  MultiHeadReference ref;
  const std::size_t n = H * d;
  const double g_out = gamma32(static_cast<double>(n));
  ref.out.assign(T * dm, 0.0);
  ref.bound.assign(T * dm, 0.0);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t f = 0; f < n; ++f) {
      const double of = o[t * n + f], dof = d_o[t * n + f];
      for (std::size_t c = 0; c < dm; ++c) {
        const double wo = w.w_o[f * dm + c];
        ref.out[t * dm + c] += of * wo;
        ref.bound[t * dm + c] += (g_out * (std::abs(of) + dof) + dof) * std::abs(wo);
      }
    }
  }
  for (double& b : ref.bound) b *= kReferenceSlack;  // 8.
  return ref;
}

}  // namespace ropecheck
