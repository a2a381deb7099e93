// The report's thread sweep: each RoPE case and attention problem measured at several thread
// counts, grouped by the case name without its count (bench/format/case_name.h), with the rate
// and limit_fraction at each; cases at one count, and plugins timed in their worker, left out.
//   build/tests/reports_tests --gtest_filter='ThreadSweepRows.*'
#include <gtest/gtest.h>

#include "reports/bench_tables.h"

namespace ropecheck {
namespace {

void add(BenchData& bench, const std::string& name, const char* counter, double rate, double fraction) {
  BenchCase c;
  c.name = name;
  c.real_time_ns = {1e6, 1e6, 1e6};
  c.counters[counter] = {rate * 1e9, rate * 1e9 * 1.02, rate * 1e9 * 0.98};
  c.counters["probe_rate"] = {rate / fraction * 1e9, rate / fraction * 1e9, rate / fraction * 1e9};
  c.limit_fraction = {fraction, fraction * 1.01, fraction * 0.99};
  add_case(bench, c);
}

void add_rope(BenchData& bench, const char* impl, const char* shape, int threads, double gbs, double fraction,
              bool in_worker = false) {
  add(bench, bench::full_name(RopeCaseName{impl, shape, "interleaved", threads, in_worker}), "bytes_per_second",
      gbs, fraction);
}

TEST(ThreadSweepRows, EachCaseAtEveryThreadCountWithItsRateAndFraction) {
  BenchData bench;
  add_rope(bench, "kernel/avx2", "llama7b_prefill4096", 1, 20, 0.85);
  add_rope(bench, "kernel/avx2", "llama7b_decode_at4095", 1, 5, 0.4);  // one count: no row
  add_rope(bench, "plugin/peer", "llama7b_prefill4096", 1, 3, 0.1, true);  // in its worker: no row
  add_rope(bench, "plugin/peer", "llama7b_prefill4096", 2, 5, 0.1, true);
  add(bench, bench::full_name(AttentionCaseName{8, 512, 64, 1}), "flops", 30, 0.7);
  add_rope(bench, "kernel/avx2", "llama7b_prefill4096", 2, 36, 0.8);
  add(bench, bench::full_name(AttentionCaseName{8, 512, 64, 2}), "flops", 54, 0.75);
  add(bench, bench::full_name(AttentionCaseName{8, 512, 64, 2, bench::AttentionRope::fused}), "flops", 50, 0.7);
  add(bench, bench::full_name(bench::ConversionCaseName{"conversion_fp16/avx512", "gpt2_small_prefill512", 1}),
      "bytes_per_second", 80, 0.45);
  add(bench, bench::full_name(bench::ConversionCaseName{"conversion_fp16/avx512", "gpt2_small_prefill512", 2}),
      "bytes_per_second", 150, 0.42);

  const auto rows = thread_sweep_rows(bench);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].subject, "kernel/avx2 llama7b_prefill4096, interleaved");
  ASSERT_EQ(rows[0].by_threads.size(), 2u);
  EXPECT_EQ(rows[0].by_threads.at(1).unit, "GB/s");
  EXPECT_DOUBLE_EQ(*rows[0].by_threads.at(1).rate, 20);
  EXPECT_DOUBLE_EQ(*rows[0].by_threads.at(2).rate, 36);
  EXPECT_DOUBLE_EQ(*rows[0].by_threads.at(2).limit_fraction, 0.8);
  EXPECT_NEAR(*rows[0].by_threads.at(2).probe_rate, 45, 1e-9);
  EXPECT_EQ(rows[1].subject, "attention_blas causal 8 heads, 512 tokens, head_dim 64");
  EXPECT_EQ(rows[1].by_threads.at(2).unit, "GFLOP/s");
  EXPECT_DOUBLE_EQ(*rows[1].by_threads.at(2).rate, 54);  // the fused form is a subject of its own
  EXPECT_EQ(rows[2].subject, "conversion_fp16/avx512 gpt2_small_prefill512");
  EXPECT_DOUBLE_EQ(*rows[2].by_threads.at(2).limit_fraction, 0.42);
}

}  // namespace
}  // namespace ropecheck
