// The fast RoPE algorithm, one contract for every ISA level (scalar, AVX2, AVX-512, NEON, SVE): a
// porter's reference. Plain C types only: the AVX2/AVX-512/NEON/SVE files are compiled with their own
// ISA flags, and must not instantiate C++ library templates the linker could pick for code that
// runs anywhere.
//
// Per token t (position m = positions[t]; multi-axis tokens: run_multi_axis_tokens below):
//   1. the token's table row: cos/sin of m * theta_i in double, times the attention factor (1
//      unless YaRN/LongRoPE scale it), rounded to fp32 once.
//      Exactly (angle m * theta_i in double, |m| <= 2^24: error <= 2^-53 |m theta|; SLEEF u35:
//      <= 3.5 double ulp) at the anchor a = kAnchorEvery * floor(m / kAnchorEvery), then
//      advanced m - a steps by the step rotation (cos theta_i, sin theta_i):
//        c' = c cos(theta_i) - s sin(theta_i),  s' = s cos(theta_i) + c sin(theta_i)   (double)
//      Each step adds <= ~2^-51 (rounding, and the step's own 3.5-ulp angle error), so after
//      fewer than kAnchorEvery = 32 steps the drift is < 2^-45: invisible after the rounding to
//      fp32 (the tolerance model's slack is 2^-26.5). A row is a function of the position
//      alone, never of the other tokens of the call or of earlier calls; so it is formed once
//      per position, a whole anchor's block of kAnchorEvery rows at a time (SLEEF once, then a
//      few FMAs per pair a row), and kept (TableRowCache, below) for every later token at that
//      position: the other layers, the next calls of a decode. Without room in the cache the
//      row is formed the same way into the scratch table (a run of consecutive positions
//      advancing one step a token).
//      The row:
//        interleaved: cos_dup = [c0 c0 c1 c1 ...], sin_signed = [-s0 s0 -s1 s1 ...]   (rotary_dim)
//        half_split:  cos = [c0 c1 ...], sin = [s0 s1 ...]                             (rotary_dim/2)
//   2. every q head, then every k head, of the token, in place:
//        interleaved: y = x * cos_dup + swap_pairs(x) * sin_signed
//        half_split:  y1 = x1 * c - x2 * s,  y2 = x2 * c + x1 * s    (x1, x2: the two halves)
//      remainders by masked loads/stores; features past rotary_dim are never touched.
// bf16 and fp16 storage (the *_bf16 and *_fp16 entry points): the same algorithm on 16-bit q and
// k, widened to fp32 on load (exact) and rounded to nearest even on store (fp16: subnormals kept):
// fp32 arithmetic, one rounding per output.
// Napkin math: q and k are read and written once (8 bytes a float, 4 a bf16); the row is
// 2 * rotary_dim floats (1 KiB at rotary_dim 128, against the 32 KiB of Llama 7B's q and k of a
// token), read once and reused by every head, so it stays in L1.
#pragma once

#include <cstdint>

#include "core/fp16_bits.h"

namespace ropecheck::kernels {

// Element: float, std::uint16_t holding bf16 bit patterns, or Fp16. (A template of data only: no code
// is instantiated from it, so nothing compiled with ISA flags can leak to other levels.)
template <typename Element>
struct RopeKernelArgs {
  Element* q;                     // [tokens][q_heads][head_dim]
  Element* k;                     // [tokens][k_heads][head_dim]; k_heads may be 0
  std::int64_t tokens;
  std::int64_t q_heads;
  std::int64_t k_heads;
  int head_dim;
  int rotary_dim;                 // even, <= head_dim
  bool interleaved;               // else half_split
  const std::int64_t* positions;  // one per token, |m| <= 2^24
  const double* theta;            // rotary_dim / 2 inverse frequencies (scaled: frequency.h)
  double cos_sin_scale;           // the attention factor: cos/sin times it before the rounding
  float* table;                   // scratch: 2 * rotary_dim floats (any alignment; 64 is fastest)
  double* angles;                 // scratch: 2 * rotary_dim doubles (see AngleState)
  const struct TableRowCache* rows = nullptr;  // rows kept across calls (below); nullptr: none
  // Multi-axis RoPE (core/position_axes.h): `axes` positions per token, token-major; with
  // axes > 1, row_axis gives the axis of every float of a table row (row_floats(rotary_dim)
  // entries, the padding's 0) and axis_rows is scratch for kMaxAxes rows of row_floats each.
  int axes = 1;
  const std::int32_t* row_axis = nullptr;
  float* axis_rows = nullptr;
};

// Floats of one table row as the multi-axis path reads and writes it: 2 * rotary_dim rounded up
// to whole 16-float vectors (TableRows::row_bytes leaves that much room in every row).
inline std::int64_t row_floats(int rotary_dim) { return (2 * std::int64_t{rotary_dim} + 15) / 16 * 16; }

// Step 1's table rows kept across calls (kernel_rope.cc owns them): a decode call is one token,
// and rotating its 32 KiB costs less than forming its angles exactly; every layer of a model
// rotates at the same positions. vLLM's cos_sin_cache and HF's cached cos/sin keep the same
// table, for every position up front; here a block of kAnchorEvery rows is formed on first use.
struct TableRowCache {
  // The rows of positions [first, first + kAnchorEvery), first a multiple of kAnchorEvery, one
  // every `stride` floats, with *ready telling whether they hold their values yet; nullptr where
  // the cache has no room for them.
  float* (*block)(void* owner, std::int64_t first, bool** ready);
  void* owner;
  std::int64_t stride;
};

inline constexpr std::int64_t kAnchorEvery = 32;

inline std::int64_t anchor_of(std::int64_t m) {  // kAnchorEvery * floor(m / kAnchorEvery)
  const std::int64_t q = m / kAnchorEvery;
  return (q - (m % kAnchorEvery < 0 ? 1 : 0)) * kAnchorEvery;
}

// Views of the `angles` scratch: cos/sin of m theta_i for the current token, and of theta_i.
struct AngleState {
  double* cos_m;
  double* sin_m;
  double* cos_step;
  double* sin_step;
};

// Internal linkage: each level's file, compiled with its own flags, gets its own copy of the
// code below (a shared inline copy could be one compiled for AVX-512).
namespace {

template <typename Args>
AngleState angle_state(const Args& p) {
  const int half = p.rotary_dim / 2;
  return {p.angles, p.angles + half, p.angles + 2 * half, p.angles + 3 * half};
}

// The token loop every level shares. Level provides, for its Args:
//   exact(p, m)           cos/sin of m theta_i into the AngleState by SLEEF, and into p.table
//   step(p)               cos/sin of theta_i (the step), once per call, when a run needs it
//   advance(p)            the AngleState to the next position by the step rotation, and into
//                         p.table (rounded to fp32)
//   rotate(p, rows, n)    n consecutive head vectors of one token, with the row at p.table;
//                         or rotate_token(p, q, q_heads, k, k_heads): the token's q and k at once

// Forms the rows of positions [first, first + count) into table, table + stride, ...: exact at
// first (an anchor), advanced from there.
template <typename Level, typename Args>
void form_rows(const Args& p, std::int64_t first, std::int64_t count, float* table, std::int64_t stride,
               bool& have_step) {
  Args at = p;
  at.table = table;
  Level::exact(at, static_cast<double>(first));
  for (std::int64_t i = 1; i < count; ++i) {
    if (!have_step) Level::step(p);
    have_step = true;
    at.table = table + i * stride;
    Level::advance(at);
  }
}

// Token t's q and k heads, with the row at p.table (one pass where the level rotates a token's
// q and k at once).
template <typename Level, typename Args>
void rotate_token_heads(const Args& p, std::int64_t t) {
  auto* q = p.q + t * p.q_heads * p.head_dim;
  auto* k = p.k + t * p.k_heads * p.head_dim;
  if constexpr (requires { Level::rotate_token(p, q, p.q_heads, k, p.k_heads); }) {
    Level::rotate_token(p, q, p.q_heads, k, p.k_heads);
  } else {
    Level::rotate(p, q, p.q_heads);
    Level::rotate(p, k, p.k_heads);
  }
}

// One multi-axis row from its axes' rows: float j from rows[row_axis[j]], a vector at a time in
// GCC's vector types, one register of the level's flags (AVX-512, AVX2, or the baseline's SSE2 at
// the scalar level). Written as a plain loop, GCC at -O2 left it scalar: a fifth of an in-cache
// token's time.
#if defined(__AVX512F__)
inline constexpr int kAssembleWidth = 16;
#elif defined(__AVX2__)
inline constexpr int kAssembleWidth = 8;
#else
inline constexpr int kAssembleWidth = 4;  // SSE2's or NEON's registers: a wider type GCC splits a float at a time
#endif
using AssembleFloats = float __attribute__((vector_size(4 * kAssembleWidth)));
using AssembleInts = std::int32_t __attribute__((vector_size(4 * kAssembleWidth)));

inline void assemble_row(const float* const rows[3], const std::int32_t* row_axis, std::int64_t floats,
                         float* out) {
  for (std::int64_t j = 0; j < floats; j += kAssembleWidth) {  // floats: whole 16-float vectors
    AssembleFloats t, h, w;
    AssembleInts axis;
    __builtin_memcpy(&t, rows[0] + j, sizeof t);
    __builtin_memcpy(&h, rows[1] + j, sizeof h);
    __builtin_memcpy(&w, rows[2] + j, sizeof w);
    __builtin_memcpy(&axis, row_axis + j, sizeof axis);
    // Selected by masks (a compare gives all ones where true), not by `?:` on the vectors: at the
    // scalar level GCC 12 lowered that (on 8 floats, two SSE2 registers) to a branch a float
    // through the stack, 13% of the scalar kernel's time on Qwen2-VL's MRoPE (bench/README.md).
    const AssembleInts from_h = axis == 1, from_w = axis == 2;
    const auto bits = [](AssembleFloats v) { return reinterpret_cast<AssembleInts>(v); };
    const AssembleInts picked = (bits(h) & from_h) | (bits(w) & from_w) | (bits(t) & ~(from_h | from_w));
    __builtin_memcpy(out + j, &picked, sizeof picked);
  }
}

// Multi-axis tokens (p.axes > 1). A token's row is assembled from the 1D rows of its axes'
// positions, each pair's floats from its axis's row: those rows are the 1D kernel's bit for bit,
// kept and formed the same way, so a text token (every axis at one position) is rotated exactly
// as by 1D RoPE, with that row itself and no assembly.
// Napkin math: assembling is four loads, two compares and two blends a 16-float vector, 16
// vectors at rotary_dim 128, against the 256 of Qwen2-VL 7B's 32 heads of q and k a token.
template <typename Level, typename Args>
void run_multi_axis_tokens(const Args& p) {
  bool have_step = false;
  const std::int64_t floats = row_floats(p.rotary_dim);
  // Per axis: the kept block last used (positions of one axis move in runs: an image's row
  // index, its column index), or the position formed into the axis's scratch row.
  struct AxisRow {
    std::int64_t anchor = 0;
    float* block = nullptr;
    bool in_scratch = false;
    std::int64_t scratch_position = 0;
  } axis_row[3];
  const auto row_of = [&](int a, std::int64_t m) -> const float* {
    AxisRow& r = axis_row[a];
    const std::int64_t anchor = anchor_of(m);
    if (r.block == nullptr || r.anchor != anchor) {
      bool* ready = nullptr;
      r.block = p.rows != nullptr ? p.rows->block(p.rows->owner, anchor, &ready) : nullptr;
      r.anchor = anchor;
      if (r.block != nullptr && !*ready) {
        form_rows<Level>(p, anchor, kAnchorEvery, r.block, p.rows->stride, have_step);
        *ready = true;
      }
    }
    if (r.block != nullptr) return r.block + (m - anchor) * p.rows->stride;
    float* scratch = p.axis_rows + a * floats;
    if (!r.in_scratch || r.scratch_position != m) {
      form_rows<Level>(p, anchor, m - anchor + 1, scratch, 0, have_step);
      r.in_scratch = true;
      r.scratch_position = m;
    }
    return scratch;
  };
  Args with_row = p;
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    const std::int64_t* m = p.positions + t * p.axes;
    bool one_position = true;
    for (int a = 1; a < p.axes; ++a) one_position = one_position && m[a] == m[0];
    if (one_position) {
      with_row.table = const_cast<float*>(row_of(0, m[0]));
    } else {
      const float* rows[3];
      for (int a = 0; a < p.axes; ++a) rows[a] = row_of(a, m[a]);
      if (p.axes == 2) rows[2] = rows[0];  // vision: no third axis (row_axis never says 2)
      assemble_row(rows, p.row_axis, floats, p.table);
      with_row.table = p.table;
    }
    rotate_token_heads<Level>(with_row, t);
  }
}

template <typename Level, typename Args>
void run_tokens(const Args& p) {
  if (p.axes > 1) return run_multi_axis_tokens<Level>(p);
  bool have_step = false;
  std::int64_t in_scratch = 0;  // the position whose angles the AngleState and p.table hold...
  bool scratch_valid = false;   // ...once a row was formed there
  float* block = nullptr;       // the kept rows of block_anchor's block
  bool* ready = nullptr;
  std::int64_t block_anchor = 0;
  Args with_row = p;  // p with the token's row as its table
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    const std::int64_t m = p.positions[t];
    // Within the current block, its anchor; else a lookup (once per block, not per token).
    const bool in_block = block != nullptr && m - block_anchor >= 0 && m - block_anchor < kAnchorEvery;
    const std::int64_t anchor = in_block ? block_anchor : anchor_of(m);
    if (!in_block) {
      block = p.rows != nullptr ? p.rows->block(p.rows->owner, anchor, &ready) : nullptr;
      block_anchor = anchor;
    }
    with_row.table = p.table;
    if (block != nullptr) {
      if (!*ready) {
        form_rows<Level>(p, anchor, kAnchorEvery, block, p.rows->stride, have_step);
        *ready = true;
        scratch_valid = false;  // forming used the AngleState
      }
      with_row.table = block + (m - anchor) * p.rows->stride;
    } else if (scratch_valid && m == in_scratch + 1 && m != anchor) {
      if (!have_step) Level::step(p);
      have_step = true;
      Level::advance(p);  // the next row of the anchor's block, as form_rows forms it
      in_scratch = m;
    } else {
      form_rows<Level>(p, anchor, m - anchor + 1, p.table, 0, have_step);
      in_scratch = m;
      scratch_valid = true;
    }
    rotate_token_heads<Level>(with_row, t);
  }
}

}  // namespace

using RopeKernelProblem = RopeKernelArgs<float>;
using RopeKernelBf16Problem = RopeKernelArgs<std::uint16_t>;
using RopeKernelFp16Problem = RopeKernelArgs<Fp16>;

void rope_kernel_scalar(const RopeKernelProblem& problem);
void rope_kernel_avx2(const RopeKernelProblem& problem);    // needs AVX2 + FMA + F16C
void rope_kernel_avx512(const RopeKernelProblem& problem);  // needs AVX-512 F, DQ, VL, BW

void rope_kernel_bf16_scalar(const RopeKernelBf16Problem& problem);  // portable rounding
// AVX2 + FMA: the portable rounding with integer ops, 8 lanes a vector.
void rope_kernel_bf16_avx2(const RopeKernelBf16Problem& problem);
// AVX-512 F, DQ, VL, BW: bf16 rounded with integer ops (any AVX-512 CPU).
void rope_kernel_bf16_avx512(const RopeKernelBf16Problem& problem);
// + AVX512_BF16: vcvtneps2bf16 rounds. It flushes subnormal results (|y| < 2^-126) to zero,
// where the portable rounding keeps them: an absolute difference below 2^-126.
void rope_kernel_bf16_avx512bf16(const RopeKernelBf16Problem& problem);

void rope_kernel_fp16_scalar(const RopeKernelFp16Problem& problem);  // portable rounding
// AVX2 + FMA + F16C (vcvtph2ps / vcvtps2ph, round to nearest even, subnormals kept).
void rope_kernel_fp16_avx2(const RopeKernelFp16Problem& problem);
// AVX-512 F (vcvtph2ps / vcvtps2ph, round to nearest even, subnormals kept).
void rope_kernel_fp16_avx512(const RopeKernelFp16Problem& problem);
#if defined(__aarch64__)
// Advanced SIMD (every aarch64 CPU): fp16 by fcvtl / fcvtn (round to nearest even, subnormals
// kept: FPCR as Linux starts it), bf16 by the portable rounding with integer ops, 4 lanes a vector.
void rope_kernel_neon(const RopeKernelProblem& problem);
void rope_kernel_bf16_neon(const RopeKernelBf16Problem& problem);
void rope_kernel_fp16_neon(const RopeKernelFp16Problem& problem);
// mutant/neon_zip_halves_swapped's: rope_kernel_neon with the interleaved table's two zip halves
// stored in the wrong order (impls/mutants/neon_zip_halves_swapped.cc).
void rope_kernel_neon_zip_halves_swapped(const RopeKernelProblem& problem);
// SVE, any vector length (128 to 2048 bits; rope_kernel_sve_body.h): fp32; bf16 with the portable
// rounding in integer ops; fp16 by fcvt (round to nearest even, subnormals kept).
void rope_kernel_sve(const RopeKernelProblem& problem);
void rope_kernel_bf16_sve(const RopeKernelBf16Problem& problem);
void rope_kernel_fp16_sve(const RopeKernelFp16Problem& problem);
// rope_kernel_sve with its remainder predicate built for whole vectors only: the last features of
// a head whose rotary features are not a multiple of the vector length stay unrotated
// (mutant/sve_tail_predicate_dropped).
void rope_kernel_sve_tail_predicate_dropped(const RopeKernelProblem& problem);
#endif

// The 16-bit kernels' conversions alone: n elements widened to fp32 and narrowed back, in place,
// by a level's own storage code (the kernel's loads and stores above), nothing in between. Every
// element of q and k goes through both in any RoPE on that storage, so the bench times these as
// the ceiling of each 16-bit kernel (round_trip_levels.h). Widening is exact, so each value comes
// back as the level's rounding leaves an exact value: unchanged, except a NaN (made quiet) and,
// by vcvtneps2bf16, a subnormal (flushed to its signed zero).
void round_trip_fp16_avx2(Fp16* x, std::int64_t n);
void round_trip_fp16_avx512(Fp16* x, std::int64_t n);
void round_trip_bf16_avx2(std::uint16_t* x, std::int64_t n);
void round_trip_bf16_avx512(std::uint16_t* x, std::int64_t n);
void round_trip_bf16_avx512bf16(std::uint16_t* x, std::int64_t n);
#if defined(__aarch64__)
void round_trip_fp16_neon(Fp16* x, std::int64_t n);
void round_trip_bf16_neon(std::uint16_t* x, std::int64_t n);
void round_trip_fp16_sve(Fp16* x, std::int64_t n);
void round_trip_bf16_sve(std::uint16_t* x, std::int64_t n);
#endif

// The kernels' rotations alone: n elements rotated in place by one fixed angle (kAloneCos,
// kAloneSin), its cos and sin held in registers, with a level's own storage code and arithmetic
// and nothing else: no table, no positions, no heads. Any RoPE on that level also loads its
// cos/sin (or forms them) and walks heads, so the bench times these as each kernel level's
// rotation ceiling (rotation_alone_levels.h). The elements go in blocks of two of the level's
// registers (block() there): interleaved, pairs (2j, 2j + 1), as the kernel's; half-split,
// pairs (i, i + block / 2) within a block, the kernel's two halves as two registers. A remainder
// under one block is only converted (the round trip), not rotated. The arithmetic per pair is
// the kernel's: y_a = x_a c - x_b s and y_b = x_b c + x_a s, each a product rounded and one FMA.
inline constexpr float kAloneCos = 0.6f;
inline constexpr float kAloneSin = 0.8f;
void rotation_alone_avx2(float* x, std::int64_t n, bool interleaved);
void rotation_alone_fp16_avx2(Fp16* x, std::int64_t n, bool interleaved);
void rotation_alone_bf16_avx2(std::uint16_t* x, std::int64_t n, bool interleaved);
void rotation_alone_avx512(float* x, std::int64_t n, bool interleaved);
void rotation_alone_fp16_avx512(Fp16* x, std::int64_t n, bool interleaved);
void rotation_alone_bf16_avx512(std::uint16_t* x, std::int64_t n, bool interleaved);
void rotation_alone_bf16_avx512bf16(std::uint16_t* x, std::int64_t n, bool interleaved);
#if defined(__aarch64__)
void rotation_alone_neon(float* x, std::int64_t n, bool interleaved);
void rotation_alone_fp16_neon(Fp16* x, std::int64_t n, bool interleaved);
void rotation_alone_bf16_neon(std::uint16_t* x, std::int64_t n, bool interleaved);
// SVE: blocks of two vectors, 2 * svcntw() elements whatever the storage (one a 32-bit lane).
void rotation_alone_sve(float* x, std::int64_t n, bool interleaved);
void rotation_alone_fp16_sve(Fp16* x, std::int64_t n, bool interleaved);
void rotation_alone_bf16_sve(std::uint16_t* x, std::int64_t n, bool interleaved);
#endif

}  // namespace ropecheck::kernels
