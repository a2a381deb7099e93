// The kernels' rotations alone (impls/kernels/rotation_alone_levels.h), the bench's rotation
// ceilings: one for each SIMD kernel level, each rotating every whole block with the kernel's
// arithmetic (a product rounded, then one FMA; on 16-bit storage widened exactly and rounded to
// nearest even once), converting the remainder only, and touching nothing past n elements.
#include "impls/kernels/rotation_alone_levels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/storage.h"
#include "impls/kernels/rope_kernel.h"
#include "impls/registry.h"

namespace ropecheck::kernels {
namespace {

TEST(RotationAloneLevels, OneForEachSimdKernelLevel) {
  std::vector<std::string> kernels;
  for (const RopeImpl* impl : rope_implementations()) {
    const std::string id(impl->id());
    if (id.starts_with("kernel") && !id.ends_with("/scalar")) kernels.push_back(id);
  }
  ASSERT_EQ(kernels.size(), rotation_alone_levels().size());
  for (const RotationAloneLevel& level : rotation_alone_levels()) {
    SCOPED_TRACE(std::string(level.id));
    EXPECT_EQ(std::count(kernels.begin(), kernels.end(), std::string(level.kernel_id)), 1);
    EXPECT_EQ("rotation" + std::string(level.kernel_id.substr(6)), level.id);
    EXPECT_EQ(level.fp32 != nullptr, level.storage == StorageType::fp32);
    EXPECT_EQ(level.fp16 != nullptr, level.storage == StorageType::fp16);
    EXPECT_EQ(level.bf16 != nullptr, level.storage == StorageType::bf16);
  }
}

// Values as the level stores them, and back: its element bits <-> float.
struct Elements {
  StorageType storage;
  std::vector<float> f32;
  std::vector<std::uint16_t> bits;  // fp16 or bf16

  float get(std::size_t i) const {
    if (storage == StorageType::fp32) return f32[i];
    return storage == StorageType::fp16 ? float_from_fp16(Fp16{bits[i]}) : float_from_bf16(bits[i]);
  }
  void set(std::size_t i, float v) {
    if (storage == StorageType::fp32) {
      f32[i] = v;
    } else {
      bits[i] = storage == StorageType::fp16 ? fp16_from_float(v).bits : bf16_from_float(v);
    }
  }
};

// The rotation of the pair (a, b) as every level computes it: y_a = x_a c - x_b s and
// y_b = x_b c + x_a s, each the product x c rounded and then one FMA.
void rotate_pair(Elements& e, std::size_t a, std::size_t b) {
  const float xa = e.get(a), xb = e.get(b);
  e.set(a, std::fma(-xb, kAloneSin, xa * kAloneCos));
  e.set(b, std::fma(xa, kAloneSin, xb * kAloneCos));
}

TEST(RotationAloneLevels, WholeBlocksRotateAsTheKernelsArithmeticAndTheRestIsOnlyConverted) {
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const RotationAloneLevel& level : rotation_alone_levels()) {
    if (!level.available()) continue;  // every level this CPU runs
    for (const bool interleaved : {true, false}) {
      SCOPED_TRACE(std::string(level.id) + (interleaved ? " interleaved" : " half_split"));
      const auto block = static_cast<std::size_t>(level.block());
      for (const std::size_t n : {std::size_t{0}, block - 1, 5 * block, 5 * block + block / 2 + 3}) {
        constexpr std::size_t kGuards = 64;
        Elements x{level.storage, std::vector<float>(n + kGuards), std::vector<std::uint16_t>(n + kGuards)};
        for (std::size_t i = 0; i < n + kGuards; ++i) x.set(i, normal(random));
        Elements want = x;
        const std::size_t whole = n / block * block;
        for (std::size_t b = 0; b < whole; b += block) {
          for (std::size_t i = 0; i < block / 2; ++i) {
            interleaved ? rotate_pair(want, b + 2 * i, b + 2 * i + 1) : rotate_pair(want, b + i, b + block / 2 + i);
          }
        }
        const auto count = static_cast<std::int64_t>(n);
        if (level.storage == StorageType::fp32) level.fp32(x.f32.data(), count, interleaved);
        if (level.storage == StorageType::fp16) level.fp16(reinterpret_cast<Fp16*>(x.bits.data()), count, interleaved);
        if (level.storage == StorageType::bf16) level.bf16(x.bits.data(), count, interleaved);
        for (std::size_t i = 0; i < n + kGuards; ++i) {
          // Bits, not values: a sign of zero or a NaN's payload counts too.
          const bool same = level.storage == StorageType::fp32
                                ? std::memcmp(&x.f32[i], &want.f32[i], sizeof(float)) == 0
                                : x.bits[i] == want.bits[i];
          ASSERT_TRUE(same) << "n " << n << ", element " << i << (i >= n ? " (past the end)" : "") << ": "
                            << x.get(i) << " where " << want.get(i) << " was due";
        }
      }
    }
  }
}

// A rotation that leaves its input unchanged would pass the test above only if the reference did
// too: the fixed angle moves every pair.
TEST(RotationAloneLevels, TheFixedAngleMovesEveryPair) {
  EXPECT_NE(kAloneCos, 1.0f);
  EXPECT_NE(kAloneSin, 0.0f);
  // A rotation: the bench's values neither grow nor shrink over its passes.
  EXPECT_NEAR(double{kAloneCos} * kAloneCos + double{kAloneSin} * kAloneSin, 1.0, 1e-7);
}

}  // namespace
}  // namespace ropecheck::kernels
