// bench.json's cases as typed records (reports/case_records.h): each name parsed once into the
// kind of case it is, with its medians; the peers table takes plugin and Python subjects alike.
//   build/tests/reports_tests --gtest_filter='CaseRecords.*'
#include <gtest/gtest.h>

#include "reports/bench_tables.h"

namespace ropecheck {
namespace {

BenchCase case_named(const std::string& name, double gbs, double fraction) {
  BenchCase c;
  c.name = name;
  c.real_time_ns = {1e6, 1e6, 1e6};
  c.counters["bytes_per_second"] = {gbs * 1e9, gbs * 1.1e9, gbs * 0.9e9};
  c.counters["probe_rate"] = {gbs / fraction * 1e9, gbs / fraction * 1e9, gbs / fraction * 1e9};
  c.limit_fraction = {fraction, fraction * 1.05, fraction * 0.95};
  return c;
}

TEST(CaseRecords, EachNameIsParsedIntoItsKindWithItsMedians) {
  BenchData bench;
  add_case(bench, case_named("kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:2", 30, 0.8));
  add_case(bench, case_named("attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:1/real_time", 20, 0.5));
  add_case(bench, case_named("sinusoidal/formula/transformer_base_4096x512/real_time", 1, 0.1));
  add_case(bench, case_named("probe/copy_bandwidth/real_time", 50, 1.0));
  add_case(bench, case_named("conversion_fp16/avx512/gpt2_small_prefill512/real_time/threads:1", 80, 0.45));
  ASSERT_EQ(bench.records.size(), 5u);
  const CaseRecord& rope = bench.records[0];
  ASSERT_TRUE(rope.rope);
  EXPECT_EQ(rope.rope->impl, "kernel/avx512");
  EXPECT_EQ(rope.rope->threads, 2);
  EXPECT_FALSE(rope.attention || rope.table);
  EXPECT_EQ(rope.rate.unit, "GB/s");
  EXPECT_DOUBLE_EQ(*rope.rate.rate, 30);
  EXPECT_DOUBLE_EQ(*rope.rate.limit_fraction, 0.8);
  EXPECT_EQ(rope.repetitions, 3u);
  ASSERT_TRUE(bench.records[1].attention);
  EXPECT_EQ(bench.records[1].attention->tokens, 512);
  EXPECT_FALSE(bench.records[1].rope);
  ASSERT_TRUE(bench.records[2].table);
  EXPECT_EQ(bench.records[2].table->shape, "transformer_base_4096x512");
  EXPECT_FALSE(bench.records[3].rope || bench.records[3].attention || bench.records[3].table ||
               bench.records[3].conversion) << "a probe";
  ASSERT_TRUE(bench.records[4].conversion);
  EXPECT_EQ(bench.records[4].conversion->conversion, "conversion_fp16/avx512");
  EXPECT_FALSE(bench.records[4].rope || bench.records[4].attention || bench.records[4].table);
}

TEST(CaseRecords, EachSixteenBitKernelBesideItsConversionsAlone) {
  BenchData bench;
  add_case(bench, case_named("kernel_fp16/avx512/gpt2_small_prefill512/interleaved/real_time/threads:1", 40, 0.25));
  add_case(bench, case_named("kernel_fp16/avx512/gpt2_small_prefill512/half_split/real_time/threads:1", 60, 0.35));
  add_case(bench, case_named("kernel_fp16/avx512/gpt2_small_prefill512/interleaved/real_time/threads:2", 70, 0.3));
  add_case(bench, case_named("kernel_fp16/avx2/gpt2_small_prefill512/interleaved/real_time/threads:1", 30, 0.2));
  add_case(bench, case_named("conversion_fp16/avx512/gpt2_small_prefill512/real_time/threads:1", 80, 0.45));
  add_case(bench, case_named("conversion_bf16/avx512bf16/llama7b_prefill4096/real_time/threads:1", 50, 0.9));
  const auto rows = ceiling_rows(bench);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel, "kernel_fp16/avx512");
  EXPECT_EQ(rows[0].shape, "gpt2_small_prefill512");
  EXPECT_DOUBLE_EQ(*rows[0].ceiling.limit_fraction, 0.45);
  // the same level, shape and thread count: not AVX2's, not 2 threads'
  ASSERT_TRUE(rows[0].interleaved && rows[0].half_split);
  EXPECT_DOUBLE_EQ(*rows[0].interleaved->limit_fraction, 0.25);
  // by limit_fraction: 0.25 / 0.45 (the rates' 40 / 80 would be 0.5)
  EXPECT_DOUBLE_EQ(*rows[0].interleaved_share, 0.25 / 0.45);
  EXPECT_DOUBLE_EQ(*rows[0].half_split_share, 0.35 / 0.45);
  EXPECT_EQ(rows[1].kernel, "kernel_bf16/avx512bf16");
  EXPECT_FALSE(rows[1].interleaved || rows[1].half_split || rows[1].interleaved_share) << "no kernel case ran";
}

TEST(CaseRecords, EachKernelLevelBesideItsRotationAloneOfTheSameLayout) {
  BenchData bench;
  add_case(bench, case_named("kernel/avx2/gpt2_small_prefill512/interleaved/real_time/threads:1", 50, 0.7));
  add_case(bench, case_named("kernel/avx2/gpt2_small_prefill512/half_split/real_time/threads:1", 55, 0.8));
  add_case(bench, case_named("kernel/avx512/gpt2_small_prefill512/interleaved/real_time/threads:1", 60, 0.9));
  add_case(bench, case_named("rotation/avx2/gpt2_small_prefill512/interleaved/real_time/threads:1", 70, 1.05));
  add_case(bench, case_named("rotation_bf16/avx2/llama7b_decode_at4095/half_split/real_time/threads:1", 14, 0.04));
  // a rotation is no RoPE implementation: no row of the kernels' tables takes it
  EXPECT_FALSE(bench.records[3].rope);
  ASSERT_TRUE(bench.records[3].rotation);
  const auto rows = rotation_rows(bench);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel, "kernel/avx2");
  EXPECT_EQ(rows[0].layout, "interleaved");
  ASSERT_TRUE(rows[0].kernel_rate && rows[0].share);
  // the same level and layout (not AVX-512's, not half_split's), by limit_fraction: 0.7 / 1.05
  EXPECT_DOUBLE_EQ(*rows[0].kernel_rate->limit_fraction, 0.7);
  EXPECT_DOUBLE_EQ(*rows[0].share, 0.7 / 1.05);
  EXPECT_EQ(rows[1].kernel, "kernel_bf16/avx2");
  EXPECT_FALSE(rows[1].kernel_rate || rows[1].share) << "no kernel case ran";
}

TEST(CaseRecords, PeersArePluginsAndPythonCallablesBesideTheFastestKernel) {
  BenchData bench;
  add_case(bench, case_named("kernel/avx2/llama7b_prefill512/interleaved/real_time/threads:1", 20, 0.6));
  add_case(bench, case_named("kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:1", 40, 0.8));
  add_case(bench, case_named("kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:2", 70, 0.7));
  add_case(bench, case_named("kernel_fp16/avx512/llama7b_prefill512/interleaved/real_time/threads:1", 90, 0.5));
  add_case(bench, case_named("plugin/ggml/llama7b_prefill512/interleaved/threads:1/manual_time", 10, 0.2));
  add_case(bench, case_named("python/numpy_rope.apply/llama7b_prefill512/interleaved/threads:1/manual_time", 4, 0.1));
  const auto rows = peer_rows(bench);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].peer, "plugin/ggml");
  EXPECT_EQ(rows[1].peer, "python/numpy_rope.apply");
  for (const PeerRow& row : rows) {
    // the fastest fp32 kernel at the same thread count: not fp16's, not 2 threads'
    EXPECT_EQ(row.best_kernel, "kernel/avx512") << row.peer;
    EXPECT_DOUBLE_EQ(*row.best_kernel_rate, 40) << row.peer;
  }
  EXPECT_DOUBLE_EQ(*rows[0].ratio, 4.0);
  EXPECT_DOUBLE_EQ(*rows[0].fraction_ratio, 4.0);
  EXPECT_DOUBLE_EQ(*rows[1].ratio, 10.0);
}

TEST(CaseRecords, KeptRowsOfTheDecodeCasesThatCarryThem) {
  BenchData bench;
  BenchCase decode = case_named("kernel/avx512/llama7b_decode_at4095/interleaved/real_time/threads:1", 60, 0.8);
  decode.real_time_ns = {500, 400, 450};
  decode.counters["kept_row_bytes"] = {1088, 1088, 1088};
  decode.counters["fresh_block_seconds"] = {2e-5, 1e-5, 3e-5};
  add_case(bench, decode);
  add_case(bench, case_named("kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:1", 40, 0.8));
  const auto rows = kept_rows_rows(bench);
  ASSERT_EQ(rows.size(), 1u) << "only the case with the counters";
  EXPECT_EQ(rows[0].name, "kernel/avx512 llama7b_decode_at4095, interleaved");
  EXPECT_DOUBLE_EQ(rows[0].row_bytes, 1088);
  EXPECT_DOUBLE_EQ(rows[0].kept_call_seconds, 450e-9);  // the median call
  EXPECT_DOUBLE_EQ(rows[0].fresh_block_seconds, 2e-5);
}

TEST(CaseRecords, FusedCacheCasesWithTheirSpeedUpBesideWhatTheBytesAllow) {
  // Without the fused_cache parse in case_record no row comes back, and the first ASSERT fails.
  BenchData bench;
  BenchCase fused = case_named("fused_cache/avx512/llama3_8b_gqa_prefill4096/nhd_fp8_e4m3/real_time", 15, 0.9);
  fused.counters["speedup_vs_two_pass"] = {1.10, 1.05, 1.00};
  fused.counters["speedup_allowed"] = {1.19, 1.19, 1.19};
  fused.counters["speedup_fraction"] = {1.10 / 1.19, 1.05 / 1.19, 1.00 / 1.19};
  add_case(bench, fused);
  add_case(bench, case_named("fused_cache/avx2/llama_8x8_prefill8192/nhd_fp16/real_time", 10, 0.5));
  add_case(bench, case_named("kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:1", 30, 0.8));
  const auto rows = fused_cache_rows(bench);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].impl, "fused_cache/avx512");
  EXPECT_EQ(rows[0].shape, "llama3_8b_gqa_prefill4096");
  EXPECT_EQ(rows[0].cache, "nhd fp8_e4m3");
  EXPECT_DOUBLE_EQ(*rows[0].speedup, 1.05);
  EXPECT_DOUBLE_EQ(*rows[0].speedup_fraction, 1.05 / 1.19);
  EXPECT_TRUE(rows[0].limit_met());
  EXPECT_TRUE(rows[0].speedup_met());  // 0.88 of what the bytes allow
  EXPECT_FALSE(rows[1].limit_met());
  EXPECT_FALSE(rows[1].speedup) << "no speed-up counter: none shown";
  EXPECT_FALSE(rows[1].speedup_met());
  EXPECT_FALSE(bench.records[0].rope || bench.records[0].table || bench.records[0].rotation);
}

}  // namespace
}  // namespace ropecheck
