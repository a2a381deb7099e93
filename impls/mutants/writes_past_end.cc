// mutant/writes_past_end: a correct rotation whose tail loop stores one float past the end of the
// tensor (a vector tile's remainder written whole, an off-by-one bound). Only the property
// harness's guard bytes see it in a build without AddressSanitizer (properties/harness/
// guarded_apply.h); it is called through that harness only, never on an exact-size buffer.
#include <cstring>
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class WritesPastEnd final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/writes_past_end"; }
  std::string_view summary() const override {
    return "rotates correctly, then stores one float past the end of q and k";
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    PairwiseMutant::rotate_qk(spec, q, k, positions);
    for (const HeadTensor& x : {q, k}) {
      if (x.data.empty()) continue;
      const float last = x.data.back();
      std::memcpy(x.data.data() + x.data.size(), &last, sizeof(float));  // BUG: one past the end
    }
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_writes_past_end() { return std::make_unique<WritesPastEnd>(); }

}  // namespace ropecheck
