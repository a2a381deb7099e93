// mutant/rotate_half_unpermuted: HF's rotate_half pairing (i, i + r/2) applied to data
// whatever its layout, i.e. to Meta-layout (interleaved) weights without the checkpoint
// converter's permutation. Seed 002: for d = 6 this computes x1' = cos*x1 - sin*x4.
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class RotateHalfUnpermuted final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/rotate_half_unpermuted"; }
  std::string_view summary() const override { return "rotate_half pairing on interleaved data: the weight permutation forgotten (seed 002)"; }

 protected:
  Layout pairing(const RopeSpec&) const override { return Layout::half_split; }  // BUG
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_rotate_half_unpermuted() { return std::make_unique<RotateHalfUnpermuted>(); }

}  // namespace ropecheck
