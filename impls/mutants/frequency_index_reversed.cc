// mutant/frequency_index_reversed: pair i gets theta_(n-1-i): the frequency table
// indexed from the wrong end (low dimensions rotating slowly instead of fast).
#include <algorithm>
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class FrequencyIndexReversed final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/frequency_index_reversed"; }
  std::string_view summary() const override { return "pair i rotates with theta_(n-1-i): frequency index reversed"; }

 protected:
  std::vector<double> frequencies(const RopeSpec& spec) const override {
    auto theta = PairwiseMutant::frequencies(spec);
    std::reverse(theta.begin(), theta.end());  // BUG
    return theta;
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_frequency_index_reversed() { return std::make_unique<FrequencyIndexReversed>(); }

}  // namespace ropecheck
