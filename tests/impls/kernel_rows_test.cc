// The fast kernel's table rows (impls/kernels/rope_kernel.h, step 1): a token's output is a
// function of its position alone, bit for bit, whether its row is formed in the call, read from
// the rows kept by an earlier call (of this spec, not another's), or formed without room to keep
// it, and whatever other tokens share the call. (The call_history_independence property checks
// earlier calls on random cases; this drives each path on purpose.) The anchored rows' step drift
// (< 2^-45) almost never changes an fp32 bit, so what this sees is a wrong row read, not a wrong
// anchor; the oracle properties bound the values themselves.
//   ctest --preset default -R KernelRows
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "impls/kernels/table_rows.h"
#include "impls/registry.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

constexpr std::int64_t kRowsQHeads = 2, kRowsKHeads = 1, kRowsHeadDim = 128;

// Each token's q and k after one call on `positions` (input: the same values at every token).
std::vector<float> rotate_batch(const RopeImpl& impl, const RopeSpec& spec, const std::vector<std::int64_t>& positions) {
  const auto tokens = static_cast<std::int64_t>(positions.size());
  std::vector<float> q(static_cast<std::size_t>(tokens * kRowsQHeads * kRowsHeadDim));
  std::vector<float> k(static_cast<std::size_t>(tokens * kRowsKHeads * kRowsHeadDim));
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = 0.25f + static_cast<float>(i % 251) / 64.0f;
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = -0.5f + static_cast<float>(i % 241) / 32.0f;
  impl.apply(spec, {q, tokens, kRowsQHeads, kRowsHeadDim}, {k, tokens, kRowsKHeads, kRowsHeadDim}, positions);
  q.insert(q.end(), k.begin(), k.end());
  return q;
}

// The same tokens one call each, concatenated as rotate_batch lays them out.
std::vector<float> rotate_one_by_one(const RopeImpl& impl, const RopeSpec& spec, const std::vector<std::int64_t>& positions) {
  const std::size_t q_row = kRowsQHeads * kRowsHeadDim, k_row = kRowsKHeads * kRowsHeadDim;
  std::vector<float> q, k;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    std::vector<float> qt(q_row), kt(k_row);
    for (std::size_t i = 0; i < q_row; ++i) qt[i] = 0.25f + static_cast<float>((t * q_row + i) % 251) / 64.0f;
    for (std::size_t i = 0; i < k_row; ++i) kt[i] = -0.5f + static_cast<float>((t * k_row + i) % 241) / 32.0f;
    impl.apply(spec, {qt, 1, kRowsQHeads, kRowsHeadDim}, {kt, 1, kRowsKHeads, kRowsHeadDim},
               std::span(positions).subspan(t, 1));
    q.insert(q.end(), qt.begin(), qt.end());
    k.insert(k.end(), kt.begin(), kt.end());
  }
  q.insert(q.end(), k.begin(), k.end());
  return q;
}

// Runs f on a new thread: the kernel's rows are per thread, so it starts with none kept.
template <typename F>
auto on_fresh_thread(F f) {
  decltype(f()) result;
  std::thread([&] { result = f(); }).join();
  return result;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class KernelRows : public ::testing::TestWithParam<const char*> {};

TEST_P(KernelRows, ATokensOutputDependsOnItsPositionAlone) {
  const RopeImpl& impl = *find_rope(GetParam());
  const auto caps = impl.capabilities();
  if (!caps.available) GTEST_SKIP() << impl.id() << ": " << caps.unavailable_reason;
  // A run across anchors (multiples of 32), a repeat, a step back, and scattered positions.
  std::vector<std::int64_t> positions;
  for (std::int64_t m = 1000; m < 1100; ++m) positions.push_back(m);
  for (const std::int64_t m : {1099, 1098, 0, 31, 32, -1, -32, -33}) positions.push_back(m);
  std::mt19937_64 random(7);
  std::uniform_int_distribution<std::int64_t> anywhere(-(1 << 20), 1 << 20);
  for (int i = 0; i < 40; ++i) positions.push_back(anywhere(random));

  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const RopeSpec spec{kRowsHeadDim, kRowsHeadDim, 10000.0, layout, AnglePrecision::fp64, {}, {}};
    SCOPED_TRACE(to_string(layout));
    const auto batch = on_fresh_thread([&] { return rotate_batch(impl, spec, positions); });
    const auto one_by_one = on_fresh_thread([&] { return rotate_one_by_one(impl, spec, positions); });
    const auto again = on_fresh_thread([&] {
      rotate_batch(impl, spec, positions);  // every row kept...
      return rotate_batch(impl, spec, positions);  // ...and read
    });
    // Rows are kept for one spec: another layout or base in between must not leave its rows.
    const auto after_others = on_fresh_thread([&] {
      RopeSpec other_layout = spec, other_base = spec;
      other_layout.layout = layout == Layout::interleaved ? Layout::half_split : Layout::interleaved;
      other_base.base = 500000.0;
      rotate_batch(impl, other_layout, positions);
      const auto after_layout = rotate_batch(impl, spec, positions);
      rotate_batch(impl, other_base, positions);
      const auto after_base = rotate_batch(impl, spec, positions);
      EXPECT_TRUE(same_bits(after_layout, after_base));
      return after_layout;
    });
    const auto without_room = on_fresh_thread([&] {
      // Fill the rows kept to their limit at other positions, one block (32 rows) a call.
      const std::size_t block_bytes = 32 * TableRows::row_bytes(kRowsHeadDim);
      for (std::size_t i = 0; i <= TableRows::kMaxBytes / block_bytes; ++i) {
        rotate_batch(impl, spec, {(std::int64_t{1} << 23) + 32 * static_cast<std::int64_t>(i)});
      }
      return rotate_batch(impl, spec, positions);
    });
    EXPECT_TRUE(same_bits(batch, one_by_one)) << "a token alone in its call differs from the same token in a batch";
    EXPECT_TRUE(same_bits(batch, again)) << "a row kept from an earlier call differs from one formed in the call";
    EXPECT_TRUE(same_bits(batch, without_room)) << "a row formed without room to keep it differs from a kept one";
    EXPECT_TRUE(same_bits(batch, after_others)) << "rows of another spec were read";
  }
}

// Every level of the build, and its widest level's fp16 kernel (the 16-bit rows are the same).
#if defined(__x86_64__)
constexpr const char* kRowKernels[] = {"kernel/scalar", "kernel/avx2", "kernel/avx512", "kernel_fp16/avx512"};
#elif defined(__aarch64__)
constexpr const char* kRowKernels[] = {"kernel/scalar", "kernel/neon", "kernel/sve", "kernel_fp16/sve"};
#else
constexpr const char* kRowKernels[] = {"kernel/scalar"};
#endif

INSTANTIATE_TEST_SUITE_P(EveryLevel, KernelRows, ::testing::ValuesIn(kRowKernels),
                         [](const ::testing::TestParamInfo<const char*>& info) { return test_name(info.param); });

}  // namespace
}  // namespace ropecheck
