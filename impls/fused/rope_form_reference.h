// The readable reference of RoPE in the engines' call forms with QK-norm (rope_form_impl.h): one
// head at a time, in fp32, as a porter would write it first. Each decision a kernel makes is one
// virtual hook (where k's rows are, how many features rotate, where cos and sin come from, the
// inverse RMS, the weight, the normalized value's rounding), so that every mutant of the form
// (impls/mutants/rope_form_mutants.cc) overrides one hook with a bug seen in the engines and
// nothing else differs.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "impls/fused/rope_form_impl.h"

namespace ropecheck {

class RopeFormReference : public RopeFormImpl {
 public:
  std::string_view id() const override { return "form_reference/scalar"; }
  std::string_view summary() const override;
  RopeFormCapabilities capabilities() const override;  // every storage, source, view and weight
  RopeCapabilities rope_capabilities() const override;  // both layouts, fp32 and fp64 angles, every scaling

 protected:
  void run(const RopeFormCall& call) const override;

  // Where k's rows are.
  virtual HeadView k_view(const RopeFormCall& call) const { return call.k; }
  // Where a view's rows are, as the kernel reads the view.
  virtual HeadView as_read(const HeadView& view, std::int64_t head_dim) const {
    (void)head_dim;
    return view;
  }
  // How many leading features the rotation turns (rotary_dim); `normalized`: after a QK-norm.
  virtual int rotated_features(const RopeSpec& spec, bool normalized) const {
    (void)normalized;
    return spec.rotary_dim;
  }
  // (cos, sin) of pair i from a cache row of `pairs` cos values then `pairs` sin values.
  virtual std::pair<float, float> cached_cos_sin(const float* row, int i, int pairs) const {
    return {row[i], row[pairs + i]};
  }
  // 1 / sqrt(mean of squares + eps) from the fp32 sum of squares of n features.
  virtual float inverse_rms(float sum_of_squares, int n, float eps) const;
  // w' of a feature's weight under the declared convention.
  virtual float weight_factor(float w, NormWeight declared) const {
    return declared == NormWeight::one_plus ? 1.0f + w : w;
  }
  // x r w' as the call keeps it into the rotation: fp32, or rounded to the storage (after x r
  // and after the weight) when that is the precision declared.
  virtual float normalized(float x, float inverse_rms, float weight, NormPrecision precision,
                           StorageType storage) const;
  // A feature of the tail (past the rotated ones) as it is stored: the value itself.
  virtual float tail_value(float value, const RopeFormCall& call) const {
    (void)call;
    return value;
  }
};

}  // namespace ropecheck
