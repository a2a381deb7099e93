// mutant/rotary_dim_ignored: partial rotary ignored: all head_dim features rotated with
// frequencies from head_dim (rotary_dim taken from head_dim, as in frameworks that forget
// partial_rotary_factor).
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class RotaryDimIgnored final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/rotary_dim_ignored"; }
  std::string_view summary() const override { return "rotates every feature with head_dim frequencies: rotary_dim ignored, the tail rotated"; }

 protected:
  int rotated_features(const RopeSpec& spec) const override { return spec.head_dim; }  // BUG
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_rotary_dim_ignored() { return std::make_unique<RotaryDimIgnored>(); }

}  // namespace ropecheck
