// Bad input to every RoPE implementation (real and mutant) is refused with InvalidInput naming the
// problem, before any data is touched; valid edge cases are accepted. Test names carry the id.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/errors.h"
#include "core/layout_permutation.h"
#include "core/scaling.h"
#include "impls/registry.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

std::vector<const RopeImpl*> every_rope_impl() {
  std::vector<const RopeImpl*> all(rope_implementations().begin(), rope_implementations().end());
  for (const RopeImpl* mutant : rope_mutants()) {
    // Its stray store past the end is safe only inside the property harness's guarded buffers.
    if (mutant->id() != "mutant/writes_past_end") all.push_back(mutant);
  }
  return all;
}

// A well-formed problem that each test breaks in one way.
struct Problem {
  RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  std::int64_t tokens = 3, q_heads = 4, k_heads = 2;
  std::vector<float> q = std::vector<float>(3 * 4 * 8, 1.0f);
  std::vector<float> k = std::vector<float>(3 * 2 * 8, 1.0f);
  std::vector<std::int64_t> positions = {0, 1, 2};

  // In a layout and angle precision the implementation has, so that only the broken part of
  // the problem can be refused.
  void apply(const RopeImpl& impl) {
    const auto caps = impl.capabilities();
    spec.layout = caps.layouts.front();
    spec.angle_precision = caps.angle_precisions.front();
    impl.apply(spec, HeadTensor{q, tokens, q_heads, spec.head_dim},
               HeadTensor{k, tokens, k_heads, spec.head_dim}, positions);
  }
};

class BadInput : public ::testing::TestWithParam<const RopeImpl*> {
 protected:
  // Applies the broken problem: it must throw InvalidInput whose message contains `expected`,
  // and leave q and k untouched.
  void expect_refused(Problem p, const std::string& expected) {
    const auto q_before = p.q, k_before = p.k;
    try {
      p.apply(*GetParam());
      ADD_FAILURE() << "accepted bad input; expected an error mentioning '" << expected << "'";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
          << "message '" << e.what() << "' does not mention '" << expected << "'";
    }
    EXPECT_EQ(p.q, q_before);
    EXPECT_EQ(p.k, k_before);
  }
};

TEST_P(BadInput, SpecIsValidated) {
  for (int d : {7, 0, -2}) {
    Problem p;
    p.spec.head_dim = d;
    expect_refused(p, "head_dim");
  }
  for (int r : {3, 0, -2}) {
    Problem p;
    p.spec.rotary_dim = r;
    expect_refused(p, "rotary_dim");
  }
  Problem too_wide;
  too_wide.spec.rotary_dim = 10;
  expect_refused(too_wide, "must not exceed head_dim");
  for (double base : {std::nan(""), std::numeric_limits<double>::infinity(), 0.0, -10000.0, 1.0, 0.5}) {
    Problem p;
    p.spec.base = base;
    expect_refused(p, "base");
  }
}

TEST_P(BadInput, ShapesAreValidated) {
  Problem no_tokens;
  no_tokens.tokens = 0;
  no_tokens.q.clear();
  no_tokens.k.clear();
  no_tokens.positions.clear();
  expect_refused(no_tokens, "empty tensor");
  Problem no_heads;
  no_heads.q_heads = 0;
  no_heads.q.clear();
  expect_refused(no_heads, "empty tensor");
  Problem short_q;
  short_q.q.pop_back();
  expect_refused(short_q, "buffer holds");
  Problem long_k;
  long_k.k.push_back(0.0f);
  expect_refused(long_k, "buffer holds");
  Problem few_positions;
  few_positions.positions.pop_back();
  expect_refused(few_positions, "positions for");
  Problem huge_shape;  // tokens * heads * head_dim overflows: refused, not wrapped around
  huge_shape.q_heads = std::numeric_limits<std::int64_t>::max() / 2;
  expect_refused(huge_shape, "buffer holds");
}

TEST_P(BadInput, TensorHeadDimMustMatchSpec) {
  Problem p;
  std::vector<float> q(3 * 4 * 6), k(3 * 2 * 8);
  try {
    GetParam()->apply(p.spec, HeadTensor{q, 3, 4, 6}, HeadTensor{k, 3, 2, 8}, p.positions);
    ADD_FAILURE() << "accepted a q with head_dim 6 for a spec of 8";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("does not match"), std::string::npos) << e.what();
  }
}

TEST_P(BadInput, QAndKMustHaveTheSameTokens) {
  Problem p;
  std::vector<float> k(2 * 2 * 8);
  EXPECT_THROW(GetParam()->apply(p.spec, HeadTensor{p.q, 3, 4, 8}, HeadTensor{k, 2, 2, 8}, p.positions),
               InvalidInput);
}

TEST_P(BadInput, AbsurdPositionsAreRefused) {
  for (std::int64_t m : {kMaxAbsPosition + 1, -kMaxAbsPosition - 1,
                         std::numeric_limits<std::int64_t>::max(),
                         std::numeric_limits<std::int64_t>::min()}) {
    Problem p;
    p.positions[1] = m;
    expect_refused(p, "outside [-2^24, 2^24]");
  }
}

TEST_P(BadInput, EdgeCasesAreAccepted) {
  const auto caps = GetParam()->capabilities();
  if (!caps.available) GTEST_SKIP() << caps.unavailable_reason;
  const auto accept = [&](Problem p) { EXPECT_NO_THROW(p.apply(*GetParam())) << describe(p.spec); };
  Problem negative;
  negative.positions = {-1, -kMaxAbsPosition, 5};
  accept(negative);
  Problem at_limit;
  at_limit.positions = {kMaxAbsPosition, -kMaxAbsPosition, 0};
  accept(at_limit);
  Problem smallest;
  smallest.spec.head_dim = smallest.spec.rotary_dim = 2;
  smallest.q.resize(3 * 4 * 2);
  smallest.k.resize(3 * 2 * 2);
  accept(smallest);
  Problem one_pair;
  one_pair.spec.rotary_dim = 2;
  accept(one_pair);
  Problem half_split;
  half_split.spec.layout = Layout::half_split;
  half_split.spec.angle_precision = caps.angle_precisions.front();
  accept(half_split);
}

INSTANTIATE_TEST_SUITE_P(EveryRopeImpl, BadInput, ::testing::ValuesIn(every_rope_impl()),
                         [](const ::testing::TestParamInfo<const RopeImpl*>& info) {
                           return test_name(std::string(info.param->id()));
                         });

TEST(BadInputLibrary, ParsersNameTheBadText) {
  EXPECT_THROW(parse_layout("interleave"), InvalidInput);
  EXPECT_THROW(parse_angle_precision("fp16"), InvalidInput);
  EXPECT_EQ(parse_layout("half_split"), Layout::half_split);
  EXPECT_EQ(parse_angle_precision("fp32"), AnglePrecision::fp32);
  try {
    parse_layout("neox");
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("'neox'"), std::string::npos) << e.what();
  }
}

TEST(BadInputLibrary, WeightPermutationChecksSizes) {
  const std::vector<float> w(2 * 6 * 3);
  EXPECT_THROW(permute_for_rotate_half(w, 5, 3), InvalidInput);     // 36 rows-floats not / 5 heads
  EXPECT_THROW(permute_for_rotate_half(w, 4, 3), InvalidInput);     // head_dim 3 is odd
  EXPECT_THROW(permute_for_rotate_half({}, 1, 3), InvalidInput);
  EXPECT_THROW(unpermute_from_rotate_half(w, 0, 3), InvalidInput);
  EXPECT_NO_THROW(permute_for_rotate_half(w, 2, 3));
}

TEST(BadInputLibrary, ScalingBoundsAreStrictWhereTheyMustBe) {
  // YaRN's ramp runs from beta_fast down to beta_slow rotations: equal ends leave no ramp.
  RopeScaling yarn;
  yarn.kind = ScalingKind::yarn;
  yarn.factor = 4.0;
  yarn.original_max_position = 4096;
  yarn.beta_fast = yarn.beta_slow = 1.0;
  EXPECT_THROW(validate(yarn, 8), InvalidInput);
  yarn.beta_fast = std::nextafter(1.0, 2.0);
  EXPECT_NO_THROW(validate(yarn, 8));
  // Llama 3's smoothing divides by high_freq_factor - low_freq_factor.
  RopeScaling llama3;
  llama3.kind = ScalingKind::llama3;
  llama3.factor = 8.0;
  llama3.original_max_position = 8192;
  llama3.low_freq_factor = llama3.high_freq_factor = 1.0;
  EXPECT_THROW(validate(llama3, 8), InvalidInput);
  // A factor of exactly 1 is no scaling, and allowed; below it the context would shrink.
  RopeScaling linear;
  linear.kind = ScalingKind::linear;
  linear.factor = 1.0;
  EXPECT_NO_THROW(validate(linear, 8));
  linear.factor = std::nextafter(1.0, 0.0);
  EXPECT_THROW(validate(linear, 8), InvalidInput);
}

}  // namespace
}  // namespace ropecheck
