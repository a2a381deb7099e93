// What the gate gates: the default rule's kernels and filter, the one-case filter of a judged
// round's process, working sets from the shape table, cache sizes from a sysfs-like folder, and
// which working sets are flagged as on a cache boundary.
//   build/tests/gate_tests --gtest_filter='GatedCases.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "gate/cache_boundary.h"
#include "gate/gate_rounds.h"
#include "gate/gated_cases.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(GatedCases, FastestLevelPerFamilyAmongTheAvailable) {
  const std::vector<std::string> all = {"kernel/scalar", "kernel/avx2", "kernel/avx512",
                                        "kernel_bf16/scalar", "kernel_bf16/avx512",
                                        "kernel_bf16/avx512bf16", "kernel_fp16/scalar",
                                        "kernel_fp16/avx2", "oracle_f64/scalar"};
  EXPECT_EQ(fastest_kernels(all), (std::vector<std::string>{"kernel/avx512", "kernel_bf16/avx512bf16",
                                                            "kernel_fp16/avx2"}));
  // An AVX2 machine: no avx512 anything.
  EXPECT_EQ(fastest_kernels({"kernel/scalar", "kernel/avx2", "kernel_bf16/scalar"}),
            (std::vector<std::string>{"kernel/avx2", "kernel_bf16/scalar"}));
  EXPECT_TRUE(fastest_kernels({"oracle_f64/scalar"}).empty());
}

TEST(GatedCases, ACaseFilterMatchesThatCaseAloneOnBothSides) {
  const std::string name = "kernel/avx512/llama7b_prefill4096/interleaved/real_time/threads:1";
  const std::regex one(exact_case_filter(case_key(name)));
  EXPECT_TRUE(std::regex_search(name, one));
  EXPECT_FALSE(std::regex_search(name + "0", one));
  EXPECT_FALSE(std::regex_search("x" + name, one));
  // Metacharacters are literal: "." matches only a dot.
  const std::regex dotted(exact_case_filter("a.b/c+d"));
  EXPECT_TRUE(std::regex_search("a.b/c+d", dotted));
  EXPECT_FALSE(std::regex_search("axb/c+d", dotted));
  EXPECT_FALSE(std::regex_search("a.b/cd", dotted));
  // A plugin case: one filter text for two plugins that call themselves differently.
  const std::string old_name = "plugin/rope_v1/llama7b_decode_at4095/interleaved/real_time/threads:1";
  const std::string new_name = "plugin/my_rope_v2/llama7b_decode_at4095/interleaved/real_time/threads:1";
  ASSERT_EQ(case_key(old_name), case_key(new_name));
  const std::regex plugin(exact_case_filter(case_key(old_name)));
  EXPECT_TRUE(std::regex_search(old_name, plugin));
  EXPECT_TRUE(std::regex_search(new_name, plugin));
  EXPECT_FALSE(std::regex_search("plugin/a/b/llama7b_decode_at4095/interleaved/real_time/threads:1", plugin));
  // Two Python functions (python/<module>.<function>) pair the same way, and not with a plugin.
  const std::string base_py = "python/base.apply/llama7b_decode_at4095/interleaved/threads:1/manual_time";
  const std::string curr_py = "python/curr.apply_v2/llama7b_decode_at4095/interleaved/threads:1/manual_time";
  ASSERT_EQ(case_key(base_py), case_key(curr_py));
  const std::regex python(exact_case_filter(case_key(base_py)));
  EXPECT_TRUE(std::regex_search(base_py, python));
  EXPECT_TRUE(std::regex_search(curr_py, python));
  EXPECT_FALSE(std::regex_search("plugin/base/llama7b_decode_at4095/interleaved/threads:1/manual_time", python));
}

TEST(GatedCases, EachRoundVisitsEveryCaseOnceInASeededOrder) {
  std::mt19937_64 a(7), b(7);
  const auto first = shuffled_case_order(10, a);
  EXPECT_EQ(first, shuffled_case_order(10, b));  // the seed replays
  auto sorted = first;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_NE(first, shuffled_case_order(10, a));  // and rounds differ
}

TEST(GatedCases, DefaultFilterMatchesExactlyTheRule) {
  const std::regex filter(default_gate_filter({"kernel/avx512", "kernel_bf16/avx512bf16"}));
  const auto gated = [&](const std::string& name) { return std::regex_search(name, filter); };
  EXPECT_TRUE(gated("kernel/avx512/llama3_8b_gqa_prefill512/interleaved/real_time/threads:1"));
  EXPECT_TRUE(gated("kernel/avx512/llama7b_prefill4096/interleaved/real_time/threads:1"));
  EXPECT_TRUE(gated("kernel_bf16/avx512bf16/llama7b_decode_at4095/interleaved/real_time/threads:1"));
  EXPECT_TRUE(gated("attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:1/real_time"));
  EXPECT_FALSE(gated("kernel/avx2/llama7b_prefill4096/interleaved/real_time/threads:1"));
  // The backward runs the forward's code (kernel_rope.cc): measured by bench, not gated twice.
  EXPECT_FALSE(gated("kernel/avx512/llama7b_prefill4096/interleaved/backward/real_time/threads:1"));
  EXPECT_FALSE(gated("kernel/avx512/llama7b_prefill4096/half_split/real_time/threads:1"));
  EXPECT_FALSE(gated("kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:1"));
  EXPECT_FALSE(gated("attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:2/real_time"));
  EXPECT_FALSE(gated("attention_blas/causal_8heads/tokens:4096/head_dim:128/blas_threads:1/real_time"));
  const std::regex plugins(outside_gate_filter("plugin"));
  EXPECT_TRUE(std::regex_search("plugin/mine/llama7b_decode_at4095/interleaved/threads:2/manual_time", plugins));
  EXPECT_FALSE(std::regex_search("plugin/mine/llama7b_decode_at4095/interleaved/backward/threads:2/manual_time", plugins));
  EXPECT_FALSE(std::regex_search("kernel/avx512/llama7b_decode_at4095/interleaved/", plugins));
  EXPECT_FALSE(std::regex_search("python/mine.apply/llama7b_decode_at4095/interleaved/", plugins));
  const std::regex pythons(outside_gate_filter("python"));
  EXPECT_TRUE(std::regex_search("python/base.apply/llama7b_decode_at4095/interleaved/threads:1", pythons));
  EXPECT_FALSE(std::regex_search("plugin/mine/llama7b_decode_at4095/interleaved/real_time", pythons));
}

TEST(GatedCases, WorkingSetsFromTheShapeTable) {
  // Llama 3 8B GQA, 512 tokens: (32 + 8) heads x 128 x 512 elements.
  EXPECT_EQ(working_set_bytes("kernel/avx512/llama3_8b_gqa_prefill512/interleaved/real_time/threads:1"),
            40u * 128 * 512 * 4);
  EXPECT_EQ(working_set_bytes("kernel_bf16/avx512bf16/llama3_8b_gqa_prefill512/interleaved/real_time/threads:1"),
            40u * 128 * 512 * 2);
  EXPECT_EQ(working_set_bytes("conversion_bf16/avx512bf16/llama3_8b_gqa_prefill512/real_time/threads:1"),
            working_set_bytes("kernel_bf16/avx512bf16/llama3_8b_gqa_prefill512/interleaved/real_time/threads:1"));
  EXPECT_EQ(working_set_bytes("rotation_fp16/avx2/llama3_8b_gqa_prefill512/half_split/real_time/threads:1"),
            40u * 128 * 512 * 2);
  EXPECT_EQ(working_set_bytes("plugin/*/llama7b_decode_at4095/interleaved/real_time/threads:1"), 64u * 128 * 4);
  EXPECT_EQ(working_set_bytes("attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:1/real_time"),
            4u * 512 * 8 * 64 * 4);
  EXPECT_FALSE(working_set_bytes("sinusoidal/scalar/transformer_base_4096x512/real_time").has_value());
  EXPECT_FALSE(working_set_bytes("kernel/avx512/no_such_shape/interleaved/real_time/threads:1").has_value());
}

TEST(GatedCases, WithinAFactorOfTwoOfL2OrL3IsFlagged) {
  const std::vector<CacheLevel> caches = {{2, 1 * kMiB}, {3, 32 * kMiB}};
  EXPECT_EQ(cache_boundary_flag(5 * kMiB, caches), "");     // 5x L2, 0.16x L3
  EXPECT_EQ(cache_boundary_flag(128 * kMiB, caches), "");   // 4x L3
  EXPECT_EQ(cache_boundary_flag(64 * kMiB, caches), "");    // exactly 2x: outside
  EXPECT_EQ(cache_boundary_flag(32 * 1024, caches), "");    // L1-sized
  EXPECT_EQ(cache_boundary_flag(2 * kMiB - 1, caches).substr(0, 11), "working set");
  EXPECT_NE(cache_boundary_flag(32 * kMiB, caches).find("32.0 MiB L3"), std::string::npos);
  EXPECT_EQ(cache_boundary_flag(32 * kMiB, {}), "");        // unknown caches: nothing flagged
}

TEST(GatedCases, CacheSizesFromSysfs) {
  const test::ScratchDir dir("sysfs_cache");
  const auto index = [&](int i, const char* level, const char* type, const char* size) {
    const auto d = dir / ("index" + std::to_string(i));
    std::filesystem::create_directories(d);
    std::ofstream(d / "level") << level << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
  };
  index(0, "1", "Data", "32K");
  index(1, "1", "Instruction", "32K");
  index(2, "2", "Unified", "1024K");
  index(3, "3", "Unified", "32M");
  const auto caches = read_cpu_caches(dir.path());
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_EQ(caches[0].level, 2);
  EXPECT_EQ(caches[0].bytes, 1 * kMiB);
  EXPECT_EQ(caches[1].level, 3);
  EXPECT_EQ(caches[1].bytes, 32 * kMiB);
  EXPECT_TRUE(read_cpu_caches(dir / "missing").empty());
}

}  // namespace
}  // namespace ropecheck
