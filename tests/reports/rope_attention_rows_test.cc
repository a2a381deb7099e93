// The report's "RoPE with attention" rows: per problem and thread count, each RoPE form's time over
// attention alone's, read from the rates of the three case names (bench/format/case_name.h).
#include <gtest/gtest.h>

#include "reports/bench_tables.h"

namespace ropecheck {
namespace {

void add_attention(BenchData& bench, const AttentionCaseName& name, double gflops) {
  BenchCase c;
  c.name = bench::full_name(name);
  c.real_time_ns = {1e6, 1e6, 1e6};
  c.counters["flops"] = {gflops * 1e9, gflops * 1e9 * 1.01, gflops * 1e9 * 0.99};
  add_case(bench, c);
}

TEST(RopeAttentionRows, EachFormAgainstAttentionAloneOnTheSameProblemAndThreads) {
  BenchData bench;
  using bench::AttentionRope;
  add_attention(bench, {8, 512, 64, 1}, 30);  // no RoPE form: no row
  add_attention(bench, {8, 2048, 128, 1}, 40);
  add_attention(bench, {8, 2048, 128, 1, AttentionRope::separate}, 38);
  add_attention(bench, {8, 2048, 128, 1, AttentionRope::fused}, 39);
  add_attention(bench, {8, 2048, 128, 2}, 70);
  add_attention(bench, {8, 2048, 128, 2, AttentionRope::fused}, 35);
  const auto rows = rope_attention_rows(bench);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tokens, 2048);
  EXPECT_EQ(rows[0].threads, 1);
  EXPECT_DOUBLE_EQ(*rows[0].alone_rate, 40);
  EXPECT_DOUBLE_EQ(*rows[0].separate_ratio, 40.0 / 38);  // time ratio = rate alone / rate form
  EXPECT_DOUBLE_EQ(*rows[0].fused_ratio, 40.0 / 39);
  EXPECT_EQ(rows[1].threads, 2);
  EXPECT_FALSE(rows[1].separate_ratio);
  EXPECT_DOUBLE_EQ(*rows[1].fused_ratio, 2.0);
}

}  // namespace
}  // namespace ropecheck
