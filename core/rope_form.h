// The engines' own call forms of RoPE, and the per-head RMSNorm fused before it (issue 52): what
// a call does around the rotation, as the KV-cache write (kv_cache.h) is what a call does after it.
//
// Call forms (how an engine hands RoPE its operands):
//   - angles: from the spec (the kernel forms cos and sin itself), or from a cos/sin cache indexed
//     by position: [rows][rotary_dim] fp32, row m = cos(m theta_i) a for i < rotary_dim/2, then
//     sin(m theta_i) a (vLLM's cos_sin_cache, FlashInfer's apply_rope_with_cos_sin_cache). The
//     cache is built here from the spec, so every scaling composes with it.
//   - q and k as strided views into one buffer: a view's head h of token t starts at element
//     offset + t * token_stride + h * head_stride and holds head_dim features (flat
//     [tokens, heads * head_dim], slices of a packed qkv, or MLA's rope part q_pe at offset
//     nope_dim of each [nope | rope] head). k may be absent. Everything in the buffer outside the
//     views' rows (v, the nope parts, gaps) is not the call's to touch.
// QK-norm (Qwen3, Gemma 3, GLM-4): before the rotation, each head of q and k is normalized over
// all its head_dim features, x_hat_f = x_f / sqrt(mean_f(x^2) + eps) * w'_f, with w' = w (Qwen3:
// plain) or 1 + w (Gemma), q and k with weights of their own; then rotated. The features past
// rotary_dim are normalized but not rotated. Declared precision: fp32 (the normalized value kept
// in fp32 into the rotation, as fused kernels do) or storage (rounded to the storage type before
// and after the weight, as an unfused chain of a norm then a RoPE in the model's dtype does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/spec.h"
#include "core/storage.h"

namespace ropecheck {

enum class AngleSource { spec, cos_sin_cache };
enum class NormWeight { plain, one_plus };
enum class NormPrecision { fp32, storage };

std::string_view to_string(AngleSource source);
std::string_view to_string(NormWeight weight);
std::string_view to_string(NormPrecision precision);

// The models' eps values (Qwen3 1e-6, Gemma 3 1e-6, GLM-4 1e-5).
inline constexpr double kModelNormEps[] = {1e-6, 1e-5};

struct QkNorm {
  double eps = 1e-6;  // finite, > 0
  NormWeight weight = NormWeight::plain;
  NormPrecision precision = NormPrecision::fp32;
};

// A strided view of heads in the call's buffer, in elements. heads 0: absent (k only).
struct HeadView {
  std::int64_t heads = 0;
  std::int64_t offset = 0;
  std::int64_t token_stride = 0;
  std::int64_t head_stride = 0;
};

// The flat view [tokens, heads * head_dim] starting at `offset`.
HeadView flat_view(std::int64_t heads, std::int64_t head_dim, std::int64_t offset = 0);

// The element where (token, head)'s head_dim features start.
inline std::int64_t row_start(const HeadView& view, std::int64_t token, std::int64_t head) {
  return view.offset + token * view.token_stride + head * view.head_stride;
}

// One past the last element the view's rows reach (its offset when it has no rows).
std::int64_t view_end(const HeadView& view, std::int64_t tokens, std::int64_t head_dim);

// Throws InvalidInput naming the view (`name`) for negative offsets or strides, heads that overlap
// one another (head_stride < head_dim with several heads) or tokens that overlap (token_stride
// shorter than one token's heads), and rows past `elements`.
void validate_view(const HeadView& view, std::int64_t tokens, std::int64_t head_dim, std::int64_t elements,
                   std::string_view name);
// Throws InvalidInput when a row of q and a row of k could share an element. Disjoint: the two
// views' whole extents, or (one token stride) one token's q rows and k rows in disjoint spans of
// the stride's period, as the slices of a packed qkv are.
void validate_disjoint(const HeadView& q, const HeadView& k, std::int64_t tokens, std::int64_t head_dim);

void validate(const QkNorm& norm);  // eps finite and > 0

// The cos/sin cache of `rows` positions for `spec` (one axis, any scaling): [rows][rotary_dim],
// each value computed in double and rounded once to fp32, the attention factor folded in.
// Throws InvalidInput for a multi-axis spec, a backward spec, or rows outside [1, 2^24].
std::vector<float> build_cos_sin_cache(const RopeSpec& spec, std::int64_t rows);

// w' of one feature: w, or 1 + w (in double: the declared convention's exact value).
inline double norm_weight(NormWeight convention, float w) {
  return convention == NormWeight::one_plus ? 1.0 + static_cast<double>(w) : static_cast<double>(w);
}

// Element `index` of a buffer of `storage` elements (fp32 values, bf16/fp16 bit patterns), widened
// exactly; and a value rounded to nearest even into it: kv_cache.h's element access, on the
// storages q and k come in.
float load_element(StorageType storage, std::span<const std::byte> buffer, std::int64_t index);
void store_element(StorageType storage, std::span<std::byte> buffer, std::int64_t index, float value);
int element_bytes(StorageType storage);

std::string describe(const QkNorm& norm);            // "qk_norm eps=1e-06 weight=plain precision=fp32"
std::string describe(const HeadView& view);          // "heads 8 at offset 0, strides 3072 / 128"

}  // namespace ropecheck
