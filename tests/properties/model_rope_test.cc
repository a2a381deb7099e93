// The model shapes that carry a model's own rotation (core/model_shapes.h: DeepSeek-V3's rope
// call, q_pe and k_pe): a case at such a shape takes its sizes and the model's layout, base and
// scaling, each where the subject implements it, and the drawn ones elsewhere.
//   build/tests/properties_tests --gtest_filter='ModelRope*'
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/frequency.h"
#include "core/model_shapes.h"
#include "properties/harness/model_shape_cases.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"

namespace ropecheck {
namespace {

const ModelShape& deepseek_v3() {
  const ModelShape* shape = find_model_shape("deepseek_v3_rope_prefill512");
  if (shape == nullptr) throw std::runtime_error("no model shape deepseek_v3_rope_prefill512");
  return *shape;
}

RopeCapabilities capabilities(std::vector<Layout> layouts, std::vector<ScalingKind> kinds) {
  RopeCapabilities caps;
  caps.layouts = std::move(layouts);
  caps.angle_precisions = {AnglePrecision::fp32, AnglePrecision::fp64};
  caps.scaling_kinds = std::move(kinds);
  return caps;
}

// Runs `check` on a few cases picked at the shape with `caps`; the failure message, or "".
std::string at_the_shape(const RopeCapabilities& caps, const std::function<void(const QkCase&)>& check) {
  const ModelShapeInForce in_force(deepseek_v3());
  const Subject subject{"fake/subject", nullptr, nullptr, false, nullptr};
  RunConfig config;
  config.property_id = "model_rope";
  config.cases = 3;  // each a 512-token case of 129 heads: a few show what is drawn and what is not
  ErrorTracker tracker;
  const PropertyResult result = check_property(subject, config, "units", tracker, [&] {
    check(pick_qk_case(caps, Rotary::any));
  });
  return result.status == Status::passed ? "" : result.message + "\n" + result.counterexample;
}

// DeepSeek-V3's rope call: q_pe 128 heads x 64 and k_pe one head, interleaved, YaRN factor 40
// over 4096 with mscale = mscale_all_dim = 1, whose attention factor is exactly 1.
TEST(ModelRope, DeepSeekV3IsAVerifiedShapeWithItsOwnRotation) {
  const ModelShape& shape = deepseek_v3();
  EXPECT_EQ(shape.tokens, 512);
  EXPECT_EQ(shape.q_heads, 128);
  EXPECT_EQ(shape.k_heads, 1);
  EXPECT_EQ(shape.head_dim, 64);
  EXPECT_EQ(shape.rotary_dim, 0);
  EXPECT_TRUE(shape.verified);
  ASSERT_EQ(shape.rope, &kDeepSeekV3Rope);
  const RopeSpec spec{64, 64, shape.rope->base, shape.rope->layout, AnglePrecision::fp64, shape.rope->scaling, {}};
  EXPECT_EQ(describe(spec), "head_dim=64 rotary_dim=64 base=10000 layout=interleaved angles=fp64 scaling=yarn "
                            "factor=40 original_max=4096 beta_fast=32 beta_slow=1 mscale=1 mscale_all_dim=1");
  EXPECT_EQ(attention_factor(spec), 1.0);
}

TEST(ModelRope, ACaseAtTheShapeTakesTheModelsRotation) {
  const auto caps = capabilities({Layout::interleaved, Layout::half_split},
                                 {ScalingKind::none, ScalingKind::linear, ScalingKind::yarn});
  EXPECT_EQ(at_the_shape(caps, [](const QkCase& c) {
              RC_ASSERT(c.tokens == 512);
              RC_ASSERT(c.q_heads == 128);
              RC_ASSERT(c.k_heads == 1);
              RC_ASSERT(c.spec.head_dim == 64);
              RC_ASSERT(c.spec.layout == Layout::interleaved);
              RC_ASSERT(c.spec.base == 10000.0);
              RC_ASSERT(c.spec.scaling == kDeepSeekV3Rope.scaling);
            }),
            "");
}

// A subject without interleaved pairs or without YaRN keeps the drawn layout or scaling (one of
// its own), and the model's base.
TEST(ModelRope, WhatTheSubjectLacksStaysDrawn) {
  const auto caps = capabilities({Layout::half_split}, {ScalingKind::none, ScalingKind::linear});
  EXPECT_EQ(at_the_shape(caps, [](const QkCase& c) {
              RC_ASSERT(c.spec.layout == Layout::half_split);
              RC_ASSERT(c.spec.base == 10000.0);
              RC_ASSERT(c.spec.scaling.kind != ScalingKind::yarn);
              RC_ASSERT(c.q_heads == 128);
            }),
            "");
}

}  // namespace
}  // namespace ropecheck
