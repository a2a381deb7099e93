// What every level of the fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) shares: where a
// token's rows and angles are, the token loop, and the dispatch on storage and norm. A level's
// file provides Head<S, kNorm, kRotate> (S: its storage policy) with
//   using Element;                       the storage's element
//   sum_of_squares(x, d)                 a head's, in fp32, in the level's lanes
//   inverse_rms(s, count, d, eps, r)     r[i] = 1 / sqrt(s[i] / d + eps) for up to kFormBatch
//                                        heads, each step one IEEE fp32 operation a lane
//   apply(p, x, w, angles, r)            one head at x, in place: normalized (kNorm) by r with
//                                        weight w', rotated (kRotate) with the angles, stored once.
// Include it ONLY from the levels' files (internal linkage: each gets its own copy, compiled for
// its own level). Names carry a form_ prefix: unity builds put these files beside the other
// kernels' bodies.
#pragma once

#include <cstdint>

#include "impls/kernels/qk_norm_rope_kernel.h"
#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

// A token's angles in the level table's form (rope_kernel.h): interleaved cos_dup and sin_signed,
// rotary_dim each; half-split cos and sin, rotary_dim / 2 each.
struct FormAngles {
  const float* c = nullptr;
  const float* s = nullptr;
};

// Heads normalized together: their sums of squares first, then their inverse RMS in one vector,
// then each head normalized and rotated. One head at a time, every head waited for its own
// reduction, division and root (a chain of ~80 cycles) with its stores queued behind it: the
// AVX-512 bf16 call ran at 0.27 of the limit (bench/README.md).
inline constexpr int kFormBatch = 16;

// Token t's q heads, then its k heads, each with its view's weight, kFormBatch heads at a time.
template <typename Head>
void form_token(const QkNormRopeArgs& p, std::int64_t t, FormAngles angles) {
  using Element = typename Head::Element;
  Element* base = reinterpret_cast<Element*>(p.buffer);
  const FormView views[2] = {p.q_view, p.k_view};
  const float* weights[2] = {p.q_weight, p.k_weight};
  Element* rows[kFormBatch];
  const float* row_weight[kFormBatch];
  float sums[kFormBatch], r[kFormBatch];
  int n = 0;
  const auto flush = [&] {
    if (p.norm != FormNorm::none) {
      for (int i = 0; i < n; ++i) sums[i] = Head::sum_of_squares(rows[i], p.head_dim);
      Head::inverse_rms(sums, n, p.head_dim, p.eps, r);
    } else {
      for (int i = 0; i < n; ++i) r[i] = 1.0f;
    }
    for (int i = 0; i < n; ++i) Head::apply(p, rows[i], row_weight[i], angles, r[i]);
    n = 0;
  };
  for (int part = 0; part < 2; ++part) {
    const FormView& v = views[part];
    Element* row = base + v.offset + t * v.token_stride;
    for (std::int64_t h = 0; h < v.heads; ++h) {
      rows[n] = row + h * v.head_stride;
      row_weight[n] = weights[part];
      if (++n == kFormBatch) flush();
    }
  }
  if (n > 0) flush();
}

// The level's rows (Base: its exact/step/advance) made the form's: run_tokens forms token t's row
// at p.table as kernel/<level> does, then the token's heads are normalized and rotated with it.
// run_tokens visits the tokens in order, once each (one axis): the counter says which.
template <typename Base, typename Head>
struct FormRowLevel : Base {
  template <typename Args>
  static void rotate_token(const Args& p, float* q, std::int64_t q_heads, float* k, std::int64_t k_heads) {
    (void)q, (void)q_heads, (void)k, (void)k_heads;
    form_token<Head>(p, (*p.next_token)++, {p.table, p.table + p.rotary_dim});
  }
};

// A cos/sin cache row (rotary_dim / 2 cos, then as many sin) as the interleaved table's
// cos_dup and sin_signed, into `table`. Exact: copies and sign flips.
inline void form_spread_row(const float* row, int rotary_dim, float* table) {
  const int pairs = rotary_dim / 2;
  for (int i = 0; i < pairs; ++i) {
    table[2 * i] = table[2 * i + 1] = row[i];
    table[rotary_dim + 2 * i] = -row[pairs + i];
    table[rotary_dim + 2 * i + 1] = row[pairs + i];
  }
}

template <typename Base, typename Head>
void form_run(const QkNormRopeArgs& p) {
  if (!p.rotate) {
    for (std::int64_t t = 0; t < p.tokens; ++t) form_token<Head>(p, t, {});
    return;
  }
  if (p.cos_sin_cache == nullptr) {
    std::int64_t next = 0;
    QkNormRopeArgs a = p;
    a.q = a.k = nullptr;  // run_tokens' flat q and k: unused (rotate_token reads the views)
    a.q_heads = a.k_heads = 0;
    a.axes = 1;
    a.next_token = &next;
    run_tokens<FormRowLevel<Base, Head>>(a);
    return;
  }
  const int pairs = p.rotary_dim / 2;
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    const float* row = p.cos_sin_cache + p.positions[t] * p.rotary_dim;
    if (p.interleaved) {
      form_spread_row(row, p.rotary_dim, p.table);
      form_token<Head>(p, t, {p.table, p.table + p.rotary_dim});
    } else {
      form_token<Head>(p, t, {row, row + pairs});
    }
  }
}

// The call on storage S: the norm and rotation the arguments ask for, each a Head of its own.
template <template <typename, FormNorm, bool> class Head, typename Base, typename S>
void form_on_storage(const QkNormRopeArgs& p) {
  switch (p.norm) {
    case FormNorm::none:
      if (p.rotate) form_run<Base, Head<S, FormNorm::none, true>>(p);
      return;
    case FormNorm::fp32:
      return p.rotate ? form_run<Base, Head<S, FormNorm::fp32, true>>(p) : form_run<Base, Head<S, FormNorm::fp32, false>>(p);
    case FormNorm::storage:
      return p.rotate ? form_run<Base, Head<S, FormNorm::storage, true>>(p)
                      : form_run<Base, Head<S, FormNorm::storage, false>>(p);
  }
}

template <template <typename, FormNorm, bool> class Head, typename Base, typename Fp32, typename Bf16, typename Fp16>
void form_dispatch(const QkNormRopeArgs& p) {
  switch (p.storage) {
    case FormStorage::fp32: return form_on_storage<Head, Base, Fp32>(p);
    case FormStorage::bf16: return form_on_storage<Head, Base, Bf16>(p);
    case FormStorage::fp16: return form_on_storage<Head, Base, Fp16>(p);
  }
}

}  // namespace
}  // namespace ropecheck::kernels
