// The counted half's pure parts: callgrind's totals line, the cycle estimate, the verdict rule
// with its spread and memory note, the routing of a case (gate/README.md, "Counted").
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bench/format/counted_json.h"
#include "core/errors.h"
#include "core/exit_codes.h"
#include "gate/callgrind_totals.h"
#include "gate/counted_rule.h"
#include "gate/gated_cases.h"

namespace ropecheck {
namespace {

constexpr const char* kCallgrindOut =
    "version: 1\ncreator: callgrind-3.19.0\npid: 1\n"
    "desc: LL cache: 33554432 B, 64 B, 16-way associative\n"
    "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
    "summary: 0\n"
    "fn=(1) f\n16 3 3\n"
    "totals: 5395612 9902740 1016206 4 516864 22 1\n";

TEST(CallgrindTotals, ReadsTheTotalsLineByItsEventsWithTrailingZerosLeftOut) {
  const auto t = parse_callgrind_totals(kCallgrindOut, "test");
  EXPECT_EQ(t.creator, "callgrind-3.19.0");
  EXPECT_EQ(t.counts.ir, 5395612u);
  EXPECT_EQ(t.counts.dw, 1016206u);
  EXPECT_EQ(t.counts.i1mr, 4u);
  EXPECT_EQ(t.counts.d1mr, 516864u);
  EXPECT_EQ(t.counts.d1mw, 22u);
  EXPECT_EQ(t.counts.ilmr, 1u);
  EXPECT_EQ(t.counts.dlmr, 0u);  // left out by callgrind: zero
  EXPECT_EQ(t.counts.dlmw, 0u);
}

TEST(CallgrindTotals, RefusesAnOutputWithoutTheCacheEventsOrTheTotals) {
  EXPECT_THROW(parse_callgrind_totals("events: Ir\ntotals: 5\n", "no cache sim"), InvalidInput);
  EXPECT_THROW(parse_callgrind_totals("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n", "unfinished"),
               InvalidInput);
  EXPECT_THROW(parse_callgrind_totals("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\ntotals: 5 x\n", "bad"),
               InvalidInput);
}

TEST(CycleModel, ChargesL1MissesServedByTheLastLevelAndLastLevelMissesApart) {
  const CycleModel model{.l1_miss_cycles = 10, .ll_miss_cycles = 100};
  EventCounts c;
  c.ir = 1000;
  c.d1mr = 30;  // 30 L1 misses, of which 5 also missed the last level
  c.dlmr = 5;
  EXPECT_DOUBLE_EQ(model.estimate(c), 1000 + 10 * 25 + 100 * 5);
  EXPECT_EQ(model.formula(), "Ir + 10 x (L1 misses - LL misses) + 100 x LL misses");
}

constexpr CycleModel kModel{10, 100};

CountedCase counted(double ir, double l1 = 0, double ll = 0, int calls = 10) {
  CountedCase c;
  c.name = "kernel/avx2/llama7b_decode_at4095/interleaved/real_time/threads:1";
  c.calls = calls;
  c.totals.ir = static_cast<std::uint64_t>(ir * calls);
  c.totals.d1mr = static_cast<std::uint64_t>(l1 * calls);
  c.totals.dlmr = static_cast<std::uint64_t>(ll * calls);
  c.estimated_cycles = kModel.estimate(c.totals) / calls;
  return c;
}

TEST(CountedRule, ThresholdPlusOrMinusTheSpreadDecides) {
  const auto base = counted(1'000'000);
  // 1% threshold, spread kCountedSpreadPercent: just past, just under, and on it.
  const double past = 1'000'000 * (1.01 + 2 * kCountedSpreadPercent / 100);
  const double under = 1'000'000 * (1.01 - 2 * kCountedSpreadPercent / 100);
  EXPECT_EQ(judge_counted(base, counted(past), 1, kModel).verdict, GateVerdict::regression);
  EXPECT_EQ(judge_counted(base, counted(under), 1, kModel).verdict, GateVerdict::pass);
  EXPECT_EQ(judge_counted(base, counted(1'010'000), 1, kModel).verdict, GateVerdict::inconclusive);
  EXPECT_EQ(judge_counted(base, counted(1'000'000), 1, kModel).verdict, GateVerdict::pass);
  EXPECT_EQ(judge_counted(base, counted(900'000), 1, kModel).verdict, GateVerdict::pass);  // faster
  const auto v = judge_counted(base, counted(1'020'000), 1, kModel);
  EXPECT_NEAR(v.cycles_ratio, 1.02, 1e-12);
  EXPECT_NEAR(v.instructions_ratio, 1.02, 1e-12);
  EXPECT_TRUE(v.memory_note.empty()) << v.memory_note;
}

TEST(CountedRule, AChangeOfMissesAloneIsJudgedByTheEstimateAndNamed) {
  // Same instructions, 2000 more L1 misses per call: +20000 estimated cycles of 1,000,000 + 10,000.
  const auto v = judge_counted(counted(1'000'000, 1'000), counted(1'000'000, 3'000), 1, kModel);
  EXPECT_EQ(v.verdict, GateVerdict::regression);
  EXPECT_NEAR(v.instructions_ratio, 1, 1e-12);
  EXPECT_NEAR(v.l1_misses_ratio, 3, 1e-12);
  EXPECT_NE(v.memory_note.find("L1 misses +200.00%"), std::string::npos) << v.memory_note;
  // Misses where the base had none.
  const auto from_none = judge_counted(counted(1'000'000), counted(1'000'000, 100, 100), 1, kModel);
  EXPECT_TRUE(std::isnan(from_none.ll_misses_ratio));
  EXPECT_NE(from_none.memory_note.find("LL misses from none"), std::string::npos) << from_none.memory_note;
}

TEST(CountedRule, RunsPairByNameAndTheWorstVerdictSetsTheExitCode) {
  CountedRun base, current;
  auto a = counted(1000), b = counted(1000), only = counted(1000);
  b.name = "b";
  only.name = "only-in-base";
  base.cases = {a, b, only};
  auto slower = counted(1100);
  slower.name = "b";
  current.cases = {a, slower};
  const auto j = judge_counted_runs(base, current, 1);
  ASSERT_EQ(j.cases.size(), 2u);
  EXPECT_EQ(j.passed, 1u);
  EXPECT_EQ(j.regressions, 1u);
  EXPECT_EQ(j.exit_code, kExitFailed);
  ASSERT_EQ(j.unpaired.size(), 1u);
  EXPECT_EQ(j.unpaired[0], "only-in-base");
  EXPECT_THROW(judge_counted(a, a, 0, kModel), InvalidInput);
  EXPECT_THROW(judge_counted(a, counted(0), 1, kModel), InvalidInput);
}

TEST(CountedRouting, CountsWhatFitsTheSimulatedLastLevelAndTimesTheRest) {
  const auto in_cache = route_case("kernel/avx2/llama3_8b_gqa_prefill512/interleaved/real_time/threads:1");
  EXPECT_TRUE(in_cache.counted) << in_cache.why;
  EXPECT_TRUE(route_case("kernel/avx2/llama7b_decode_at4095/interleaved/real_time/threads:1").counted);
  EXPECT_TRUE(route_case("attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:1/real_time").counted);
  const auto dram = route_case("kernel/avx512/llama7b_prefill4096/interleaved/real_time/threads:1");
  EXPECT_FALSE(dram.counted);
  EXPECT_NE(dram.why.find("128.0 MiB exceeds the simulated 32.0 MiB last level"), std::string::npos) << dram.why;
}

TEST(CountedRouting, TheTimedHalfTimesOnlyTheShapesThatDoNotFit) {
  const auto filter = timed_half_filter({"kernel/avx512", "kernel_bf16/avx512bf16"});
  EXPECT_EQ(filter, "^(kernel/avx512|kernel_bf16/avx512bf16)/(llama7b_prefill4096)/interleaved/(real_time|threads:)");
  EXPECT_EQ(timed_half_filter({}), "");
}

TEST(CountedKernels, AreTheFastestLevelValgrindRunsNeverAvx512) {
  const std::vector<std::string> ids = {"kernel/scalar", "kernel/avx2", "kernel/avx512", "kernel_bf16/avx512bf16",
                                        "kernel_bf16/scalar", "kernel_fp16/avx512"};
  EXPECT_EQ(fastest_counted_kernels(ids), (std::vector<std::string>{"kernel/avx2", "kernel_bf16/scalar"}));
  EXPECT_EQ(counted_level({"kernel/avx2", "kernel_bf16/scalar"}), "avx2");
  EXPECT_EQ(counted_level({"kernel_bf16/scalar"}), "scalar");
}

}  // namespace
}  // namespace ropecheck
