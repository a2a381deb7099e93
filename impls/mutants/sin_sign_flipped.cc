// mutant/sin_sign_flipped: the sine's sign flipped, i.e. R_-m instead of R_m (a
// transposed rotation matrix, or conj(freqs_cis)). Still a rotation group: only the truth sees it.
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class SinSignFlipped final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/sin_sign_flipped"; }
  std::string_view summary() const override { return "rotates by -m theta: sin sign flipped (transposed R_m)"; }

 protected:
  std::pair<float, float> cos_sin(const RopeSpec& spec, std::int64_t m, double theta,
                                  double scale) const override {
    const auto [c, s] = PairwiseMutant::cos_sin(spec, m, theta, scale);
    return {c, -s};  // BUG
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_sin_sign_flipped() { return std::make_unique<SinSignFlipped>(); }

}  // namespace ropecheck
