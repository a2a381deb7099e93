// The report's backward table: each backward case beside the same implementation's forward on
// the same shape, layout and threads, with the difference of their fractions of the probe.
#include <gtest/gtest.h>

#include "reports/bench_tables.h"

namespace ropecheck {
namespace {

void add_rope(BenchData& bench, const bench::RopeCaseName& name, double fraction) {
  BenchCase c;
  c.name = bench::full_name(name);
  c.real_time_ns = {1e6, 1e6, 1e6};
  c.counters["bytes_per_second"] = {1e10, 1e10, 1e10};
  c.limit_fraction = {fraction, fraction * 1.01, fraction * 0.99};
  add_case(bench, c);
}

bench::RopeCaseName rope(const char* impl, const char* layout, int threads, bool backward) {
  bench::RopeCaseName name{impl, "llama7b_prefill512", layout, threads};
  name.backward = backward;
  return name;
}

TEST(BackwardRows, EachBackwardBesideItsForwardOnTheSameTensorsAndThreads) {
  BenchData bench;
  add_rope(bench, rope("kernel/avx512", "interleaved", 1, false), 0.90);
  add_rope(bench, rope("kernel/avx512", "interleaved", 1, true), 0.86);
  add_rope(bench, rope("kernel/avx512", "interleaved", 2, true), 0.80);   // no forward at 2: no row
  add_rope(bench, rope("kernel/avx512", "half_split", 1, false), 0.70);   // no backward: no row
  add_rope(bench, rope("kernel/avx2", "interleaved", 1, true), 0.50);     // no forward: no row
  const auto rows = backward_rows(bench);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].impl, "kernel/avx512");
  EXPECT_EQ(rows[0].layout, "interleaved");
  EXPECT_EQ(rows[0].threads, 1);
  EXPECT_DOUBLE_EQ(*rows[0].backward.limit_fraction, 0.86);
  EXPECT_DOUBLE_EQ(*rows[0].forward.limit_fraction, 0.90);
  EXPECT_NEAR(*rows[0].difference, -0.04, 1e-12);
  // The forward's own tables never see a backward case.
  for (const CaseRecord& c : bench.records) EXPECT_FALSE(c.rope && c.rope->backward) << c.name;
}

}  // namespace
}  // namespace ropecheck
