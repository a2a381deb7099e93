// The call forms' mutants (issue 52): the readable reference (impls/fused/rope_form_reference.h)
// with one hook overridden by a bug found in the engines' kernels, each named after it. The
// reference's hooks keep every mutant inside the buffer and the cache (a read out of bounds in
// this process would be undefined, not a finding): where the real bug read past an end, the
// mutant reads another element or computes the angle the extra features would get.
#include <cmath>
#include <limits>
#include <memory>

#include "core/errors.h"
#include "impls/fused/rope_form_reference.h"

namespace ropecheck {
namespace {

// k read with q's head stride (SGLang #20559): right when the two are packed alike, wrong when k
// has heads of its own width. Kept to strides that stay within the buffer.
class KWithQHeadStride final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/form_k_with_q_head_stride"; }
  std::string_view summary() const override { return "k's heads read with q's head stride (SGLang #20559)"; }

 protected:
  HeadView k_view(const RopeFormCall& call) const override {
    HeadView k = call.k;
    k.head_stride = call.q.head_stride;
    try {
      validate_view(k, call.tokens, call.spec.head_dim, call.elements(), "k");
      validate_disjoint(call.q, k, call.tokens, call.spec.head_dim);
    } catch (const InvalidInput&) {
      return call.k;  // the bug would read outside the buffer or write into q: not here
    }
    return k;
  }
};

// The views' strides ignored: every view read as a contiguous [tokens, heads * head_dim] from its
// first row (vLLM #16658: the sliced MLA q_pe and k_pe taken as contiguous).
class StridesIgnored final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/form_strides_ignored"; }
  std::string_view summary() const override { return "q's and k's strides ignored, read as flat (vLLM #16658)"; }

 protected:
  HeadView as_read(const HeadView& view, std::int64_t head_dim) const override {
    return flat_view(view.heads, head_dim, view.offset);
  }
};

// The fused norm's kernel rotates every feature, rotary_dim ignored (vLLM PR #43676: GLM-4.7's
// partial rotary, gsm8k 0; the real kernel also read the cos/sin cache past its row).
class NormRotaryDimIgnored final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/qk_norm_rotary_dim_ignored"; }
  std::string_view summary() const override {
    return "the fused QK-norm path rotates all head_dim features, rotary_dim ignored (vLLM PR #43676)";
  }

 protected:
  int rotated_features(const RopeSpec& spec, bool normalized) const override {
    return normalized ? spec.head_dim : spec.rotary_dim;
  }
};

// Cos and sin read at one index of the cache's row, as an interleaved kernel did (TensorRT-LLM
// PR #13052): sin is cos.
class CosSinSameIndex final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/cache_cos_sin_same_index"; }
  std::string_view summary() const override {
    return "cos and sin read at the same index of the cache's row (TensorRT-LLM PR #13052)";
  }

 protected:
  std::pair<float, float> cached_cos_sin(const float* row, int i, int pairs) const override {
    (void)pairs;
    return {row[i], row[i]};
  }
};

// eps inside the square root dropped: x / sqrt(mean(x^2)), NaN for a head of zeros and far off
// for a small one.
class EpsDropped final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/qk_norm_eps_dropped"; }
  std::string_view summary() const override { return "RMSNorm without eps inside the square root"; }

 protected:
  float inverse_rms(float sum_of_squares, int n, float eps) const override {
    (void)eps;
    return 1.0f / std::sqrt(sum_of_squares / static_cast<float>(n));
  }
};

// Gemma's (1 + w) applied the wrong way: to a plain weight, and left out of a Gemma one.
class WeightConventionSwapped final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/qk_norm_weight_convention_swapped"; }
  std::string_view summary() const override { return "the (1 + w) weight convention applied the wrong way"; }

 protected:
  float weight_factor(float w, NormWeight declared) const override {
    return declared == NormWeight::one_plus ? w : 1.0f + w;
  }
};

// The norm's result rounded to the storage type (an unfused chain's) though fp32 is declared.
class NormInStorageType final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/qk_norm_in_storage_type"; }
  std::string_view summary() const override {
    return "the normalized value rounded to bf16/fp16 before the rotation, though fp32 is declared";
  }

 protected:
  float normalized(float x, float inverse_rms, float weight, NormPrecision precision,
                   StorageType storage) const override {
    (void)precision;
    return RopeFormReference::normalized(x, inverse_rms, weight, NormPrecision::storage, storage);
  }
};

// The multi-head path NaN with partial NeoX rotary (vLLM #51049): a path for many heads times
// many tokens, which a 4-token test never reaches, leaves the tail unwritten (here: NaN).
class WidePathPartialNan final : public RopeFormReference {
 public:
  std::string_view id() const override { return "mutant/form_wide_path_partial_nan"; }
  std::string_view summary() const override {
    return "on the many-heads-by-many-tokens path, partial half_split rotary leaves NaN in the tail (vLLM #51049)";
  }

 protected:
  float tail_value(float value, const RopeFormCall& call) const override {
    const bool wide = call.tokens * call.q.heads >= 64;
    return wide && call.spec.layout == Layout::half_split ? std::numeric_limits<float>::quiet_NaN() : value;
  }
};

}  // namespace

std::unique_ptr<RopeFormImpl> make_mutant_form_k_with_q_head_stride() { return std::make_unique<KWithQHeadStride>(); }
std::unique_ptr<RopeFormImpl> make_mutant_form_strides_ignored() { return std::make_unique<StridesIgnored>(); }
std::unique_ptr<RopeFormImpl> make_mutant_qk_norm_rotary_dim_ignored() {
  return std::make_unique<NormRotaryDimIgnored>();
}
std::unique_ptr<RopeFormImpl> make_mutant_cache_cos_sin_same_index() { return std::make_unique<CosSinSameIndex>(); }
std::unique_ptr<RopeFormImpl> make_mutant_qk_norm_eps_dropped() { return std::make_unique<EpsDropped>(); }
std::unique_ptr<RopeFormImpl> make_mutant_qk_norm_weight_convention_swapped() {
  return std::make_unique<WeightConventionSwapped>();
}
std::unique_ptr<RopeFormImpl> make_mutant_qk_norm_in_storage_type() { return std::make_unique<NormInStorageType>(); }
std::unique_ptr<RopeFormImpl> make_mutant_form_wide_path_partial_nan() { return std::make_unique<WidePathPartialNan>(); }

}  // namespace ropecheck
