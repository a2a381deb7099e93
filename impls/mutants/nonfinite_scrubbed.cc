// mutant/nonfinite_scrubbed: a "safe" kernel that stores 0 wherever a result is NaN or Inf
// (nan_to_num on the output, or a clamp that maps overflow to zero). Finite inputs never show
// it; only nonfinite_propagation feeds NaN, Inf and overflowing pairs.
#include <cmath>
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class NonfiniteScrubbed final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/nonfinite_scrubbed"; }
  std::string_view summary() const override {
    return "stores 0 for every NaN or Inf result: non-finite inputs and overflows vanish";
  }

 protected:
  float stored(float y) const override { return std::isfinite(y) ? y : 0.0f; }  // BUG
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_nonfinite_scrubbed() {
  return std::make_unique<NonfiniteScrubbed>();
}

}  // namespace ropecheck
