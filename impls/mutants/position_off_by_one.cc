// mutant/position_off_by_one: positions counted from 1 instead of 0 (a KV-cache
// offset or an arange(1, n+1) mistake).
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class PositionOffByOne final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/position_off_by_one"; }
  std::string_view summary() const override { return "rotates by (m + 1) theta: position off by one"; }

 protected:
  std::int64_t effective_position(std::int64_t m) const override { return m + 1; }  // BUG
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_position_off_by_one() { return std::make_unique<PositionOffByOne>(); }

}  // namespace ropecheck
