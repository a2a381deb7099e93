// mutant/dynamic_ntk_base_kept: dynamic NTK as HF transformers' rotary embedding first cached it.
// The table is grown when a call is longer than any before it (past original_max_position) and
// then kept: a later call within the original length still gets the grown base. Each call alone
// is right; only a call after a longer one is wrong, which call_history_independence makes.
#include <memory>
#include <mutex>
#include <vector>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class DynamicNtkBaseKept final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/dynamic_ntk_base_kept"; }
  std::string_view summary() const override {
    return "dynamic NTK's grown base kept after a long call: later shorter calls rotate too slowly";
  }

 protected:
  std::vector<double> frequencies(const RopeSpec& spec) const override {
    if (spec.scaling.kind != ScalingKind::dynamic_ntk) return PairwiseMutant::frequencies(spec);
    const std::lock_guard lock(mutex_);
    // The cache belongs to one model: everything but the sequence length.
    RopeScaling model = spec.scaling;
    model.sequence_length = 0;
    if (!same_model(spec, model)) {
      head_dim_ = spec.head_dim;
      rotary_dim_ = spec.rotary_dim;
      base_ = spec.base;
      model_ = model;
      cached_length_ = 0;
      theta_ = PairwiseMutant::frequencies(spec);
    }
    const std::int64_t length = spec.scaling.sequence_length;
    if (length > spec.scaling.original_max_position && length > cached_length_) {
      theta_ = PairwiseMutant::frequencies(spec);  // grown for the longest call so far
      cached_length_ = length;
    } else if (cached_length_ == 0) {
      theta_ = PairwiseMutant::frequencies(spec);
    }
    return theta_;  // BUG: never shrinks back to the original base
  }

 private:
  bool same_model(const RopeSpec& spec, const RopeScaling& model) const {
    return head_dim_ == spec.head_dim && rotary_dim_ == spec.rotary_dim && base_ == spec.base &&
           model_ == model;
  }

  mutable std::mutex mutex_;
  mutable int head_dim_ = 0, rotary_dim_ = 0;
  mutable double base_ = 0;
  mutable RopeScaling model_;
  mutable std::int64_t cached_length_ = 0;
  mutable std::vector<double> theta_;
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_dynamic_ntk_base_kept() {
  return std::make_unique<DynamicNtkBaseKept>();
}

}  // namespace ropecheck
