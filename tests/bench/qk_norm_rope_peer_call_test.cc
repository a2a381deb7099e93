// The call a call-form peer is timed with (bench/qk_norm_rope_peer_cases.h): the own cases' call
// on the same bytes, changed only where the peer declares less: its angles from the spec where it
// takes no cache, no norm where it has none, its own norm precision and angle formation.
//   ctest -R QkNormRopePeerCall
#include <gtest/gtest.h>

#include "bench/qk_norm_rope_peer_cases.h"
#include "impls/registry.h"

namespace ropecheck::bench {
namespace {

// A peer that declares `caps` and never runs (the call is only built here).
class DeclaringPeer final : public RopeFormImpl {
 public:
  explicit DeclaringPeer(RopeFormCapabilities caps) : caps_(std::move(caps)) {}
  std::string_view id() const override { return "plugin/declaring"; }
  std::string_view summary() const override { return "declares, never runs"; }
  RopeFormCapabilities capabilities() const override { return caps_; }

 protected:
  void run(const RopeFormCall&) const override {}

 private:
  RopeFormCapabilities caps_;
};

TEST(QkNormRopePeerCall, ThePeerGetsTheOwnCallWhereItDeclaresAllOfIt) {
  QkNormRopeWorkload w(kQkNormRopeShapes[0], StorageType::bf16);
  RopeFormCapabilities every;
  every.storages = {StorageType::bf16};
  every.angle_sources = {AngleSource::spec, AngleSource::cos_sin_cache};
  every.norm_weights = {NormWeight::plain};
  every.norm_precision = NormPrecision::storage;
  const RopeFormCall call = qk_norm_rope_peer_call(DeclaringPeer(every), w);
  EXPECT_EQ(call.angles, AngleSource::cos_sin_cache);
  EXPECT_TRUE(call.has_norm);
  EXPECT_EQ(call.norm.precision, NormPrecision::storage);
  EXPECT_EQ(call.spec.angle_precision, AnglePrecision::fp32);  // RopeFormImpl's default: fp32 angles
  EXPECT_EQ(call.k.offset, w.shape.q_heads * w.shape.head_dim);  // the packed qkv's k slice
  EXPECT_EQ(every.why_unsupported(call), "");
}

TEST(QkNormRopePeerCall, APeerWithoutACacheOrANormGetsTheSpecsAnglesAndTheRotationAlone) {
  QkNormRopeWorkload w(kQkNormRopeShapes[0], StorageType::bf16);
  RopeFormCapabilities plain;  // spec angles, no norm
  plain.storages = {StorageType::bf16};
  const RopeFormCall call = qk_norm_rope_peer_call(DeclaringPeer(plain), w);
  EXPECT_EQ(call.angles, AngleSource::spec);
  EXPECT_TRUE(call.cos_sin_cache.empty());
  EXPECT_EQ(call.cache_rows, 0);
  EXPECT_FALSE(call.has_norm);
  EXPECT_EQ(plain.why_unsupported(call), "");
}

}  // namespace
}  // namespace ropecheck::bench
