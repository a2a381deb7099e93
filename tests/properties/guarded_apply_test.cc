// The property harness's guard bytes and evidence (properties/harness/guarded_apply.h): a write
// past the end fails the case and says so; a call that cannot show a bug is counted as vacuous,
// and a property that passed on vacuous calls only is MISTRUSTED. (That no real implementation is
// MISTRUSTED on any RoPE property: rope_properties_test.cc requires PASSED for every pair.)
#include "properties/harness/guarded_apply.h"

#include <gtest/gtest.h>

#include <vector>

#include "impls/registry.h"
#include "properties/catalogue.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

const RopeImpl& find_impl(std::string_view id) {
  for (const RopeImpl* impl : rope_implementations()) {
    if (impl->id() == id) return *impl;
  }
  for (const RopeImpl* impl : rope_mutants()) {
    if (impl->id() == id) return *impl;
  }
  throw std::runtime_error("no implementation " + std::string(id));
}

RopeSpec spec_of(int head_dim, int rotary_dim) {
  RopeSpec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = rotary_dim;
  return spec;
}

// One call through apply_guarded() on 2 tokens x 1 head; returns the evidence it left.
EvidenceCount one_call(const RopeSpec& spec, std::vector<float> q, std::vector<std::int64_t> positions,
                       Evidence evidence = Evidence::rotation) {
  reset_evidence();
  std::vector<float> k;
  apply_guarded(find_impl("rotation_matrix/scalar"), spec, q, 1, k, 0, positions, evidence);
  return ropecheck::evidence();
}

TEST(GuardedApply, CountsWhatCanShowABug) {
  const RopeSpec spec = spec_of(8, 8);
  const std::vector<float> ones(16, 1.0f), zeros(16, 0.0f);
  EXPECT_EQ(one_call(spec, ones, {0, 3}).informative, 1);
  const auto at_zero = one_call(spec, ones, {0, 0});
  EXPECT_EQ(at_zero.calls, 1);
  EXPECT_EQ(at_zero.informative, 0);
  EXPECT_EQ(at_zero.first_vacuous, "every position 0");
  EXPECT_EQ(one_call(spec, ones, {0, 0}, Evidence::input).informative, 1);  // R_0 is the point
  EXPECT_EQ(one_call(spec, zeros, {1, 2}).first_vacuous, "every rotary input 0");
  std::vector<float> tail_only(16, 0.0f);
  tail_only[6] = tail_only[7] = 1.0f;  // features past rotary_dim 4
  EXPECT_EQ(one_call(spec_of(8, 4), tail_only, {1, 2}).first_vacuous, "every rotary input 0");
}

TEST(GuardedApply, AGuardByteWrittenFailsTheCaseNamingIt) {
  const Subject mutant{"mutant/writes_past_end", &find_impl("mutant/writes_past_end"), nullptr, true};
  const auto result = run_property(*find_property("oracle_agreement"), mutant, test_run_config());
  EXPECT_EQ(result.status, Status::failed);
  EXPECT_NE(result.message.find("wrote past the end of q"), std::string::npos) << result.message;
  // The same rotation without the stray store passes: the guard, not the maths, caught it.
  const Subject correct{"rotation_matrix/scalar", &find_impl("rotation_matrix/scalar"), nullptr, false};
  EXPECT_EQ(run_property(*find_property("oracle_agreement"), correct, test_run_config()).status, Status::passed);
}

TEST(Mistrusted, APassOnVacuousCallsOnlyIsMistrusted) {
  PropertyResult passed;
  passed.status = Status::passed;
  detail::mistrust_if_vacuous(passed, EvidenceCount{5, 0, "every position 0"});
  EXPECT_EQ(passed.status, Status::mistrusted);
  EXPECT_EQ(to_string(passed.status), "MISTRUSTED");
  EXPECT_NE(passed.message.find("every position 0"), std::string::npos);

  PropertyResult informative;
  informative.status = Status::passed;
  detail::mistrust_if_vacuous(informative, EvidenceCount{5, 1, "every position 0"});
  EXPECT_EQ(informative.status, Status::passed);

  PropertyResult failed;
  failed.status = Status::failed;
  detail::mistrust_if_vacuous(failed, EvidenceCount{5, 0, "rotary_dim 0"});
  EXPECT_EQ(failed.status, Status::failed);  // a failure is a failure, vacuous or not

  PropertyResult untracked;  // a property that does not call through the harness (attention)
  untracked.status = Status::passed;
  detail::mistrust_if_vacuous(untracked, EvidenceCount{});
  EXPECT_EQ(untracked.status, Status::passed);
}

}  // namespace
}  // namespace ropecheck
