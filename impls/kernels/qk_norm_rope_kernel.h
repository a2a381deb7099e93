// The fused QK-norm + RoPE kernel in the engines' call forms (issue 52, core/rope_form.h) at each
// ISA level: per token, every head of q then of k, wherever its view puts it in the buffer, is
// read, RMS-normalized in fp32 (the sum of squares in the level's lanes, then r = 1 / sqrt(s / n +
// eps), x r, times w'), rotated with the level's own arithmetic (rope_kernel.h's: the same
// products and FMAs) and stored once, rounded to the storage. The normalized value never leaves
// the registers: one read and one write of each row. Angles from the spec come from the level's
// table rows (run_tokens, kept across calls as kernel/<level> keeps them); from a cos/sin cache,
// straight from its row (half-split) or the row spread into the table's interleaved form.
// The same kernel runs the two passes the bench compares it with: the norm alone (rotate false,
// the result rounded to the storage after x r and after w', as an unfused chain does), then the
// rotation alone (no norm).
// Plain C types only, as rope_kernel.h: the levels' files are compiled with their own flags.
// Napkin math (Qwen3-8B: 32 q + 8 k heads of 128 in a packed qkv row of 48 heads): 40 heads read
// and written a token, 20 KiB in fp32; the norm costs a second read of each head from L1 and a
// dozen operations a vector: below the memory's time out of cache. Two passes move every row
// twice.
#pragma once

#include <cstdint>

#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {

// The buffer's element storage (core/storage.h's StorageType, as plain data).
enum class FormStorage : int { fp32, bf16, fp16 };
// What happens to a head before the rotation: nothing, the norm kept in fp32, or the norm with
// x r and the product with w' each rounded to the storage (the two passes' first).
enum class FormNorm : int { none, fp32, storage };

// A view's rows in the buffer, in elements (core/rope_form.h's HeadView).
struct FormView {
  std::int64_t heads = 0;
  std::int64_t offset = 0;
  std::int64_t token_stride = 0;
  std::int64_t head_stride = 0;
};

// The levels' fast path's inverse RMS of a token's heads (q, then k), taken one token ahead
// (qk_norm_rope_kernel_body.h's form_pipeline): scratch, one per call.
struct FormFastState {
  static constexpr int kMaxHeads = 256;
  std::int64_t token = -1;  // the token whose heads' r are in r
  alignas(64) float sums[kMaxHeads];
  alignas(64) float r[kMaxHeads];
  bool plain[kMaxHeads];  // s r^2 <= kFormPlainSquare: the head's x r bounded (no NaN can come)
};

// The base's q, k, q_heads and k_heads are not read: the views say where the rows are. Its table,
// theta, angles and rows are the level's rows (spec angles; the table is also the scratch a cache
// row is spread into).
struct QkNormRopeArgs : RopeKernelArgs<float> {
  unsigned char* buffer = nullptr;
  FormStorage storage = FormStorage::fp32;
  FormView q_view, k_view;  // k_view.heads 0: no k
  const float* cos_sin_cache = nullptr;  // row m: rotary_dim / 2 cos, then as many sin; nullptr: spec angles
  FormNorm norm = FormNorm::none;
  float eps = 0;
  const float* q_weight = nullptr;  // w' (w, or 1 + w formed in fp32) of each of head_dim features
  const float* k_weight = nullptr;
  bool rotate = true;  // false: the norm alone (nothing rotated)
  std::int64_t* next_token = nullptr;  // run_tokens' token counter (scratch, one per call)
  FormFastState* fast = nullptr;       // the fast path's scratch (form_run sets it)
};

// The call (needs the level's CPU support, core/isa.h).
void qk_norm_rope_scalar(const QkNormRopeArgs& args);
void qk_norm_rope_avx2(const QkNormRopeArgs& args);
void qk_norm_rope_avx512(const QkNormRopeArgs& args);
#if defined(__aarch64__)
void qk_norm_rope_neon(const QkNormRopeArgs& args);
void qk_norm_rope_sve(const QkNormRopeArgs& args);  // any vector length
#endif

}  // namespace ropecheck::kernels
