// The report's "RoPE with attention" rows: per problem and thread count, each RoPE form's time over
// attention alone's, read from the rates of the three case names (bench/format/case_name.h).
#include <gtest/gtest.h>

#include "reports/bench_tables.h"

namespace ropecheck {
namespace {

void add_attention(BenchData& bench, const AttentionCaseName& name, double gflops, double fraction = 0) {
  BenchCase c;
  c.name = bench::full_name(name);
  c.real_time_ns = {1e6, 1e6, 1e6};
  c.counters["flops"] = {gflops * 1e9, gflops * 1e9 * 1.01, gflops * 1e9 * 0.99};
  if (fraction > 0) c.limit_fraction = {fraction, fraction, fraction};
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

// An attention peer (an attention plugin's case) is neither a form of ropecheck's attention nor
// its "alone": it has rows of its own, beside attention_blas on the same problem (kv heads too)
// and threads, the ratio by limit_fraction at one thread and by rate at more (the peer's pool may
// slow its own probe).
TEST(AttentionPeerRows, EachPeerBesideAttentionBlasOnTheSameProblem) {
  BenchData bench;
  using bench::AttentionRope;
  const std::string ggml = "plugin/ggml_flash_attn";
  add_attention(bench, {8, 512, 128, 1}, 13, 0.66);
  add_attention(bench, {8, 512, 128, 1, AttentionRope::separate}, 12, 0.6);
  add_attention(bench, {8, 512, 128, 1, AttentionRope::fused}, 12.5, 0.64);
  add_attention(bench, {8, 512, 128, 1, AttentionRope::none, 2}, 8, 0.5);  // GQA
  add_attention(bench, {8, 512, 128, 1, AttentionRope::none, 8, ggml}, 22, 1.1);
  add_attention(bench, {8, 512, 128, 1, AttentionRope::none, 2, ggml}, 18, 1.25);
  add_attention(bench, {8, 4096, 128, 2, AttentionRope::none, 8, ggml}, 30, 0.9);  // no attention_blas there
  add_attention(bench, {8, 2048, 128, 2}, 180, 0.7);
  add_attention(bench, {8, 2048, 128, 2, AttentionRope::none, 8, ggml}, 80, 0.55);
  const auto peers = attention_peer_rows(bench);
  ASSERT_EQ(peers.size(), 4u);
  EXPECT_EQ(peers[0].peer, ggml);
  EXPECT_EQ(peers[0].kv_heads, 8);
  ASSERT_TRUE(peers[0].blas && peers[0].fused && peers[0].ratio);
  EXPECT_DOUBLE_EQ(*peers[0].blas->rate, 13);
  EXPECT_DOUBLE_EQ(*peers[0].fused->limit_fraction, 0.64);
  EXPECT_DOUBLE_EQ(*peers[0].ratio, 0.66 / 1.1);
  EXPECT_EQ(peers[1].kv_heads, 2);  // the GQA peer against the GQA attention_blas, not the 8-kv one
  EXPECT_DOUBLE_EQ(*peers[1].ratio, 0.5 / 1.25);
  EXPECT_FALSE(peers[1].fused);
  EXPECT_FALSE(peers[2].ratio);
  ASSERT_TRUE(peers[3].ratio);
  EXPECT_DOUBLE_EQ(*peers[3].ratio, 180.0 / 80);  // two threads: by rate, not 0.7 / 0.55
  // ropecheck's RoPE rows: the 8-kv problem alone, its "alone" attention_blas's, not a peer's.
  const auto own = rope_attention_rows(bench);
  ASSERT_EQ(own.size(), 1u);
  EXPECT_DOUBLE_EQ(*own[0].alone_rate, 13);
}

}  // namespace
}  // namespace ropecheck
