// bf16 and fp16 storage, the checks they share as one typed test: every level of each is listed;
// every level on 16-bit buffers directly (apply_bf16 / apply_fp16), around the vector tiles, with
// guard elements after q and k, within the bound tolerance.h derives from one rounding to the
// storage (using most of it: a result left unrounded or truncated shows); bad input refused by
// name. What only one of them has is in bf16_storage_test.cc and fp16_storage_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "core/errors.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "tests/support/rotary_elements.h"
#include "tests/support/storage16.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

using test::Bf16Storage;
using test::Fp16Storage;

template <typename Storage>
class Storage16 : public ::testing::Test {};

using StorageTypes = ::testing::Types<Bf16Storage, Fp16Storage>;
class StorageName {
 public:
  template <typename T>
  static std::string GetName(int) { return std::string(to_string(T::kStorage)); }
};
TYPED_TEST_SUITE(Storage16, StorageTypes, StorageName);

TYPED_TEST(Storage16, EveryLevelIsListed) {
  // Every kernel level and both references on this storage (impls/rope/stored_reference.cc): a
  // lost registry line must not pass silently.
  const auto levels = test::implementations_storing(TypeParam::kStorage);
  EXPECT_EQ(std::count_if(levels.begin(), levels.end(),
                          [](const RopeImpl* impl) { return impl->id().starts_with(TypeParam::kKernelPrefix); }),
            TypeParam::kKernelLevels);
  EXPECT_EQ(levels.size(), static_cast<std::size_t>(TypeParam::kKernelLevels) + 2u);
}

TYPED_TEST(Storage16, EveryLevelRoundsOnceAroundTheTiles) {
  const std::vector<std::int64_t> positions = {0, 1, 4095, -77, 1 << 20};
  const std::int64_t tokens = 5, q_heads = 4, k_heads = 2;
  const double bound = rotation_bound_units({AnglePrecision::fp64, TypeParam::kStorage}, 0, 0.0, 0);
  for (const RopeImpl* level : test::implementations_storing(TypeParam::kStorage)) {
    const RopeImpl& impl = *level;
    if (!impl.capabilities().available) continue;  // every level this CPU can run
    SCOPED_TRACE(std::string(impl.id()));
    double worst = 0, worst_subnormal = 0;
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      // 2 to 68, then 128: the widths 64 and 128 have loops of their own.
      for (int rotary = 2; rotary <= 128; rotary += rotary < 68 ? 2 : 60) {
        const int head_dim = rotary + (rotary % 6 == 0 ? 6 : 0);  // some with a tail
        const RopeSpec spec{head_dim, rotary, 10000.0, layout, AnglePrecision::fp64, {}, {}};
        const auto r = test::run_stored<TypeParam>(impl, spec, tokens, q_heads, k_heads, positions);
        for (std::size_t g = 0; g < 16; ++g) {
          ASSERT_EQ(TypeParam::bits(r.q[r.q_in.size() + g]), TypeParam::bits(TypeParam::guard()))
              << "write past q, rotary_dim " << rotary;
          ASSERT_EQ(TypeParam::bits(r.k[r.k_in.size() + g]), TypeParam::bits(TypeParam::guard()))
              << "write past k, rotary_dim " << rotary;
        }
        for (const auto& [in, out, heads] : {std::tuple{&r.q_in, &r.q, q_heads}, {&r.k_in, &r.k, k_heads}}) {
          const auto exact = oracle_rope(spec, *in, tokens, heads, positions);
          for (std::size_t j = 0; j < in->size(); ++j) {
            const float y = TypeParam::widen((*out)[j]);
            const auto e = test::rotary_element(spec, *in, j);
            if (!e.rotary) {
              ASSERT_EQ(y, (*in)[j]) << "tail changed at feature " << e.feature;
              continue;
            }
            if (e.pair_norm == 0) {
              ASSERT_EQ(y, 0.0f) << "a zero pair rotated to nonzero at element " << j;
              continue;
            }
            const double error = std::abs(y - exact[j]) /
                                 (kEps32 * unit_pair_norm(TypeParam::kStorage, 1.0, e.pair_norm));
            double& into = e.pair_norm < kFp16MinNormal && TypeParam::kStorage == StorageType::fp16
                               ? worst_subnormal : worst;
            into = std::max(into, error);
            ASSERT_LE(error, bound) << to_string(layout) << " rotary " << rotary << " element " << j
                                    << " |pair| " << e.pair_norm;
          }
        }
      }
    }
    // The bound is one rounding to the storage: a level that rounds correctly uses most of it
    // somewhere (an fp32 result left unrounded, or truncated, would show as ~0 or up to 2x),
    // on fp16's subnormal pairs too (flushed results would show over 1).
    EXPECT_GT(worst, 0.5 * bound) << "no output needed rounding: is the result stored as "
                                  << to_string(TypeParam::kStorage) << "?";
    if (TypeParam::kStorage == StorageType::fp16) {
      EXPECT_GT(worst_subnormal, 0.5 * bound) << "no subnormal pair needed rounding";
    }
  }
}

TYPED_TEST(Storage16, EveryLevelAgreesWithThePortableLevel) {
  const RopeImpl* portable = find_rope(std::string(TypeParam::kKernelPrefix) + "scalar");
  ASSERT_NE(portable, nullptr);
  // The same fp32 table; the SIMD levels round each product and then fuse the add (FMA) where
  // the portable level rounds the sum: results may differ in an fp32 ulp, so the stored results
  // agree except where that ulp crosses a rounding boundary of the storage type, which one fp32
  // ulp does about once in 2^(23 - mantissa bits) elements (fp16 2^13, bf16 2^16); allowed: 8
  // times that. Tile remainders (96 of 128 features rotated, rotary_dim 38) must not cost more.
  const std::vector<std::int64_t> positions = {3, 4096, 123457, 123458};
  for (const RopeImpl* level : test::implementations_storing(TypeParam::kStorage)) {
    const RopeImpl& impl = *level;
    if (!impl.id().starts_with(TypeParam::kKernelPrefix) || !impl.capabilities().available) continue;
    std::size_t differ = 0, total = 0;
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      for (const int rotary : {96, 38}) {
        const RopeSpec spec{128, rotary, 500000.0, layout, AnglePrecision::fp64, {}, {}};
        const auto a = test::run_stored<TypeParam>(*portable, spec, 4, 8, 2, positions);
        const auto b = test::run_stored<TypeParam>(impl, spec, 4, 8, 2, positions);
        for (std::size_t j = 0; j < a.q.size(); ++j) differ += TypeParam::bits(a.q[j]) != TypeParam::bits(b.q[j]);
        for (std::size_t j = 0; j < a.k.size(); ++j) differ += TypeParam::bits(a.k[j]) != TypeParam::bits(b.k[j]);
        total += a.q.size() + a.k.size();
      }
    }
    EXPECT_LE(differ, total >> (23 - TypeParam::kMantissaBits - 3))
        << impl.id() << ": " << differ << " of " << total << " differ";
  }
}

TYPED_TEST(Storage16, BadInputIsRefusedByName) {
  using Element = typename TypeParam::Element;
  const RopeImpl& fp32_kernel = *find_rope("kernel/scalar");
  const RopeImpl& kernel = *find_rope(std::string(TypeParam::kKernelPrefix) + "scalar");
  const RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  std::vector<Element> q(2 * 8), k(2 * 8), short_k(8);
  const std::vector<std::int64_t> positions = {0, 1};
  const auto expect_refused = [&](const RopeImpl& impl, std::vector<Element>& kt, const RopeSpec& s,
                                  const std::string& says) {
    try {
      TypeParam::apply(impl, s, {q, 2, 1, 8}, {kt, 2, 1, 8}, positions);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  expect_refused(fp32_kernel, k, spec, std::string("stores fp32, not ") + std::string(to_string(TypeParam::kStorage)));
  expect_refused(kernel, short_k, spec, "buffer holds 8 elements");
  RopeSpec odd = spec;
  odd.rotary_dim = 7;
  expect_refused(kernel, k, odd, "rotary_dim");
}

}  // namespace
}  // namespace ropecheck
