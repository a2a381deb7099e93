// The fast kernel at every ISA level this CPU has, on every rotary_dim around the vector tiles
// (XNNPACK style: below, at, between and above 8 and 16 floats, and the pairs' 4/8 angle tiles),
// both layouts, GQA, guard floats after the buffers; and the ROPECHECK_ISA override.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/errors.h"
#include "core/isa.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "core/tolerance.h"
#include "tests/support/rotary_elements.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

constexpr float kGuard = 12345.0f;  // written after every buffer, must survive every kernel

// kernel/<level> for every level this build has (those the CPU lacks are skipped with the reason).
std::vector<const RopeImpl*> kernel_levels() {
  std::vector<const RopeImpl*> levels;
  for (const Isa level : built_levels()) {
    if (const RopeImpl* impl = find_rope("kernel/" + std::string(to_string(level)))) levels.push_back(impl);
  }
  return levels;
}

class KernelLevel : public ::testing::TestWithParam<const RopeImpl*> {};

TEST_P(KernelLevel, TileRemaindersAgreeWithTheOracle) {
  const RopeImpl& impl = *GetParam();
  const auto caps = impl.capabilities();
  if (!caps.available) GTEST_SKIP() << impl.id() << ": " << caps.unavailable_reason;
  const std::vector<std::int64_t> positions = {0, 1, 4095, -77, 1 << 20};
  const std::int64_t tokens = 5, q_heads = 4, k_heads = 2;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    // 2 to 68, then 128: the widths 64 and 128 have loops of their own.
    for (int rotary = 2; rotary <= 128; rotary += rotary < 68 ? 2 : 60) {
      const int head_dim = rotary + (rotary % 6 == 0 ? 6 : 0);  // some with a tail
      const RopeSpec spec{head_dim, rotary, 10000.0, layout, AnglePrecision::fp64, {}, {}};
      const auto qn = static_cast<std::size_t>(tokens * q_heads * head_dim);
      const auto kn = static_cast<std::size_t>(tokens * k_heads * head_dim);
      std::vector<float> q(qn + 16, kGuard), k(kn + 16, kGuard);
      for (std::size_t j = 0; j < qn; ++j) q[j] = std::sin(0.37f * static_cast<float>(j)) * 3.0f;
      for (std::size_t j = 0; j < kn; ++j) k[j] = std::cos(0.11f * static_cast<float>(j));
      const std::vector<float> q_in(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(qn));
      const std::vector<float> k_in(k.begin(), k.begin() + static_cast<std::ptrdiff_t>(kn));
      impl.apply(spec, HeadTensor{std::span(q).first(qn), tokens, q_heads, head_dim},
                 HeadTensor{std::span(k).first(kn), tokens, k_heads, head_dim}, positions);
      for (std::size_t g = 0; g < 16; ++g) {
        ASSERT_EQ(q[qn + g], kGuard) << "write past q, rotary_dim " << rotary;
        ASSERT_EQ(k[kn + g], kGuard) << "write past k, rotary_dim " << rotary;
      }
      for (const auto& [in, out, heads] : {std::tuple{&q_in, &q, q_heads}, {&k_in, &k, k_heads}}) {
        const auto exact = oracle_rope(spec, *in, tokens, heads, positions);
        for (std::size_t j = 0; j < in->size(); ++j) {
          const auto e = test::rotary_element(spec, *in, j);
          if (!e.rotary) {
            ASSERT_EQ((*out)[j], (*in)[j]) << "tail changed at feature " << e.feature;
            continue;
          }
          // The tolerance model's unit: eps32 times the norm of the element's own input pair.
          const double error = std::abs((*out)[j] - exact[j]) / (kEps32 * e.pair_norm);
          ASSERT_LE(error, kRoundingUnits) << impl.id() << " " << to_string(layout) << " rotary "
                                           << rotary << " element " << j;
        }
      }
    }
  }
}

// Consecutive positions take the kernels' step-rotation path (rope_kernel.h): long runs crossing
// the kExactEvery restarts, at positions where an angle error would show (2^20), must stay
// within the same bound as exactly formed angles; a gap or a repeat restarts a run.
class KernelRuns : public ::testing::TestWithParam<const RopeImpl*> {};

TEST_P(KernelRuns, LongRunsOfConsecutivePositionsStayWithinTheBound) {
  const RopeImpl& impl = *GetParam();
  const auto caps = impl.capabilities();
  if (!caps.available) GTEST_SKIP() << impl.id() << ": " << caps.unavailable_reason;
  std::vector<std::int64_t> positions;
  for (std::int64_t m = (1 << 20) - 100; m < (1 << 20) + 150; ++m) positions.push_back(m);
  positions.insert(positions.end(), {7, 7, 8});
  for (std::int64_t m = -300; m < -160; ++m) positions.push_back(m);
  const auto tokens = static_cast<std::int64_t>(positions.size());
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const int rotary : {128, 38}) {
      const RopeSpec spec{rotary, rotary, 500000.0, layout, AnglePrecision::fp64, {}, {}};
      std::vector<float> q(static_cast<std::size_t>(tokens * 2 * rotary)), k(q.size() / 2);
      // Values the storage holds exactly, so that the oracle sees the implementation's input.
      for (std::size_t j = 0; j < q.size(); ++j) {
        q[j] = round_to_storage(std::sin(0.37f * static_cast<float>(j)), caps.storage);
      }
      for (std::size_t j = 0; j < k.size(); ++j) k[j] = std::cos(0.11f * static_cast<float>(j));
      const auto q_in = q;
      impl.apply(spec, HeadTensor{q, tokens, 2, rotary}, HeadTensor{k, tokens, 1, rotary}, positions);
      const auto exact = oracle_rope(spec, q_in, tokens, 2, positions);
      const double bound = rotation_bound_units({AnglePrecision::fp64, caps.storage}, 0, 0.0, 0);
      for (std::size_t j = 0; j < q.size(); ++j) {
        const double unit =
            unit_pair_norm(caps.storage, 1.0, test::rotary_element(spec, q_in, j).pair_norm);
        const double error = std::abs(q[j] - exact[j]) / (kEps32 * unit);
        ASSERT_LE(error, bound) << impl.id() << " " << to_string(layout) << " rotary " << rotary
                                << " token " << j / static_cast<std::size_t>(2 * rotary)
                                << " position " << positions[j / static_cast<std::size_t>(2 * rotary)];
      }
    }
  }
}

// Every kernel level on every storage.
std::vector<const RopeImpl*> all_kernels() {
  std::vector<const RopeImpl*> kernels;
  for (const RopeImpl* impl : rope_implementations()) {
    if (impl->id().starts_with("kernel")) kernels.push_back(impl);
  }
  return kernels;
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, KernelRuns, ::testing::ValuesIn(all_kernels()),
                         [](const ::testing::TestParamInfo<const RopeImpl*>& info) {
                           return test_name(std::string(info.param->id()));
                         });

INSTANTIATE_TEST_SUITE_P(EveryLevel, KernelLevel, ::testing::ValuesIn(kernel_levels()),
                         [](const ::testing::TestParamInfo<const RopeImpl*>& info) {
                           return test_name(std::string(info.param->id()));
                         });

TEST(IsaDispatch, EnvironmentPinsTheLevel) {
  ::unsetenv("ROPECHECK_ISA");
  const Isa best = dispatched_isa();
  EXPECT_TRUE(cpu_supports(best));
  ::setenv("ROPECHECK_ISA", "scalar", 1);
  EXPECT_EQ(dispatched_isa(), Isa::scalar);
  ::setenv("ROPECHECK_ISA", "sse9", 1);
  EXPECT_THROW(dispatched_isa(), InvalidInput);
  for (const Isa level : {Isa::avx512, Isa::sve, Isa::neon}) {
    if (cpu_supports(level)) continue;  // another architecture's level, or one this CPU lacks
    ::setenv("ROPECHECK_ISA", std::string(to_string(level)).c_str(), 1);
    EXPECT_THROW(dispatched_isa(), InvalidInput) << "a level this CPU lacks must be refused: " << to_string(level);
  }
  ::unsetenv("ROPECHECK_ISA");
}

TEST(IsaDispatch, LevelsAndNames) {
  EXPECT_TRUE(cpu_supports(Isa::scalar));
  EXPECT_EQ(parse_isa("avx2"), Isa::avx2);
  EXPECT_EQ(to_string(Isa::avx512), "avx512");
  EXPECT_EQ(parse_isa("sve"), Isa::sve);
  // Every level of the build has its kernel on every storage; another architecture's level is
  // known by name, never built, and says so.
  for (const Isa level : built_levels()) {
    for (const char* family : {"kernel", "kernel_bf16", "kernel_fp16"}) {
      EXPECT_NE(find_rope(fmt::format("{}/{}", family, to_string(level))), nullptr) << family << "/" << to_string(level);
    }
  }
  for (const Isa level : {Isa::avx2, Isa::avx512, Isa::neon, Isa::sve}) {
    if (built_here(level)) continue;
    std::string why;
    EXPECT_FALSE(cpu_supports(level, &why));
    EXPECT_NE(why.find("not built for"), std::string::npos) << why;
    EXPECT_EQ(find_rope(fmt::format("kernel/{}", to_string(level))), nullptr) << to_string(level);
  }
  // A level the CPU lacks is unavailable in the registry, with the reason, never silently run.
  for (const RopeImpl* level : kernel_levels()) {
    const auto caps = level->capabilities();
    EXPECT_EQ(caps.available, cpu_supports(parse_isa(caps.isa))) << level->id();
    if (!caps.available) {
      EXPECT_FALSE(caps.unavailable_reason.empty());
    }
  }
}

}  // namespace
}  // namespace ropecheck
