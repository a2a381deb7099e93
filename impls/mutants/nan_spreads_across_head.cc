// mutant/nan_spreads_across_head: one non-finite feature poisons its whole head, as a dense row
// product (the explicit rotation matrix times the head vector: NaN * 0 is NaN) or a per-head
// scale computed from the row does. Correct on finite data; only nonfinite_propagation, which
// checks the pairs beside a NaN, sees it.
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class NanSpreadsAcrossHead final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/nan_spreads_across_head"; }
  std::string_view summary() const override {
    return "a NaN or Inf anywhere in a head's rotary features makes all of them NaN";
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    const std::vector<float> q_in(q.data.begin(), q.data.end()), k_in(k.data.begin(), k.data.end());
    PairwiseMutant::rotate_qk(spec, q, k, positions);
    spread(spec, q, q_in);
    spread(spec, k, k_in);
  }

 private:
  static void spread(const RopeSpec& spec, HeadTensor x, const std::vector<float>& input) {
    const auto dim = static_cast<std::size_t>(spec.head_dim);
    const auto rotary = static_cast<std::size_t>(spec.rotary_dim);
    for (std::size_t row = 0; row < input.size() / dim; ++row) {
      bool poisoned = false;
      for (std::size_t j = 0; j < rotary; ++j) poisoned |= !std::isfinite(input[row * dim + j]);
      if (!poisoned) continue;
      for (std::size_t j = 0; j < rotary; ++j) {  // BUG: the whole head, not the pair
        x.data[row * dim + j] = std::numeric_limits<float>::quiet_NaN();
      }
    }
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_nan_spreads_across_head() {
  return std::make_unique<NanSpreadsAcrossHead>();
}

}  // namespace ropecheck
