// `ropecheck compare`, the CI gate: the Mann-Whitney U statistics against enumerated and
// hand-derived values, the bench.json reader on bad input, and run_compare end to end on small
// synthetic Google Benchmark files.
//   cmake --build build --target gate_tests && build/tests/gate_tests --gtest_filter='Compare*:MannWhitney*:BenchJson*'
//   ctest --test-dir build -R 'Compare|MannWhitney|BenchJson'
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gate/compare_rule.h"
#include "bench/format/bench_json.h"
#include "gate/compare.h"
#include "cli/cli_app.h"
#include "core/exit_codes.h"
#include "gate/mann_whitney.h"
#include "core/errors.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::contains;
using Json = nlohmann::json;

// ---- Mann-Whitney U --------------------------------------------------------------------------

double u_of(const std::vector<double>& x, const std::vector<double>& y) {
  double u = 0;
  for (const double a : x) {
    for (const double b : y) u += a > b ? 1 : a == b ? 0.5 : 0;
  }
  return u;
}

// Calls f with every subset of {0, ..., n - 1} of size k, as a 0/1 mask.
void for_each_subset(int n, int k, const std::function<void(const std::vector<bool>&)>& f) {
  std::vector<bool> mask(static_cast<std::size_t>(n), false);
  std::fill(mask.begin(), mask.begin() + k, true);
  std::sort(mask.begin(), mask.end());
  do f(mask);
  while (std::next_permutation(mask.begin(), mask.end()));
}

// The permutation test by brute force: every way of splitting the pooled values into groups of
// the two sizes is equally likely under H0; p = the share of splits with U(x) <= the observed.
double brute_force_p_less(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> pooled(x);
  pooled.insert(pooled.end(), y.begin(), y.end());
  const double observed = u_of(x, y);
  double at_most = 0, total = 0;
  for_each_subset(static_cast<int>(pooled.size()), static_cast<int>(x.size()),
                  [&](const std::vector<bool>& in_x) {
                    std::vector<double> a, b;
                    for (std::size_t i = 0; i < pooled.size(); ++i) {
                      (in_x[i] ? a : b).push_back(pooled[i]);
                    }
                    total += 1;
                    if (u_of(a, b) <= observed) at_most += 1;
                  });
  return at_most / total;
}

TEST(MannWhitney, ExactCountsMatchEnumerationOfEveryRankAssignment) {
  for (int n1 = 1; n1 <= 6; ++n1) {
    for (int n2 = 1; n2 <= 6; ++n2) {
      std::vector<std::uint64_t> enumerated(static_cast<std::size_t>(n1 * n2) + 1, 0);
      for_each_subset(n1 + n2, n1, [&](const std::vector<bool>& is_x) {
        // Ranks 0..N-1; U of x = pairs (x, y) with the x ranked above.
        std::uint64_t u = 0, ys_below = 0;
        for (const bool x : is_x) x ? u += ys_below : ++ys_below;
        ++enumerated[u];
      });
      EXPECT_EQ(mann_whitney_exact_counts(n1, n2), enumerated) << n1 << " x " << n2;
    }
  }
}

TEST(MannWhitney, FullySeparatedSamplesGiveTheTextbookExactP) {
  // Current entirely below base: U = 0, and only 1 of C(n1 + n2, n1) arrangements is as extreme.
  const auto three = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6},
                                    Alternative::less);
  EXPECT_TRUE(three.exact);
  EXPECT_EQ(three.u, 0);
  EXPECT_DOUBLE_EQ(three.p, 1.0 / 20);  // C(6, 3) = 20
  const auto five = mann_whitney_u(std::vector<double>{1, 2, 3, 4, 5},
                                   std::vector<double>{6, 7, 8, 9, 10}, Alternative::less);
  EXPECT_DOUBLE_EQ(five.p, 1.0 / 252);  // C(10, 5) = 252
  // The other direction: every arrangement has U >= 0.
  EXPECT_DOUBLE_EQ(mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6},
                                  Alternative::greater)
                       .p,
                   1.0);
}

TEST(MannWhitney, ExactCdfMatchesTheTablesCriticalValueForTenAndTen) {
  // Published tables give U = 27 as the one-tailed 0.05 critical value for n1 = n2 = 10:
  // P(U <= 27) <= 0.05 < P(U <= 28). (By the recurrence: 0.044605 and 0.052561.)
  EXPECT_LE(mann_whitney_exact_cdf(10, 10, 27), 0.05);
  EXPECT_GT(mann_whitney_exact_cdf(10, 10, 28), 0.05);
  EXPECT_NEAR(mann_whitney_exact_cdf(10, 10, 27), 0.04460477602892463, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney_exact_cdf(10, 10, 100), 1.0);
}

TEST(MannWhitney, ExactPEqualsTheBruteForcePermutationTest) {
  const std::vector<std::vector<double>> xs = {{1.5, 3.2, 0.7, 5.1}, {9, 8, 7}, {2.5, 4.5, 6.5}};
  const std::vector<std::vector<double>> ys = {
      {2.0, 4.4, 6.3, 7.7, 8.8}, {1, 2, 3, 4}, {1, 3, 5, 7, 9, 11}};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const auto less = mann_whitney_u(xs[i], ys[i], Alternative::less);
    ASSERT_TRUE(less.exact);
    EXPECT_EQ(less.u, u_of(xs[i], ys[i]));
    EXPECT_NEAR(less.p, brute_force_p_less(xs[i], ys[i]), 1e-15) << i;
    // "x higher than y" is "y lower than x".
    EXPECT_NEAR(mann_whitney_u(xs[i], ys[i], Alternative::greater).p,
                brute_force_p_less(ys[i], xs[i]), 1e-15)
        << i;
  }
}

TEST(MannWhitney, TiesUseTheNormalApproximationWithTieAndContinuityCorrection) {
  // x = {1, 2, 2, 3}, y = {2, 3, 4, 4}, by hand:
  //   U of x = 0 (x=1) + 0.5 (x=2: ties y=2) + 0.5 (x=2) + 1.5 (x=3: above 2, ties 3) = 2.5
  //   mean = n1 n2 / 2 = 8; N = 8; tie groups: 2 (t=3), 3 (t=2), 4 (t=2):
  //   sum(t^3 - t) = 24 + 6 + 6 = 36
  //   var = 16/12 * (9 - 36/56) = 11.142857..., sd = 3.3380918...
  //   z = (2.5 + 0.5 - 8) / 3.3380918 = -1.4978617, p = Phi(z) = 0.0670846
  //   greater: U of y = 16 - 2.5 = 13.5, z = (13.5 + 0.5 - 8) / sd = 1.797434, p = 0.963867
  const std::vector<double> x = {1, 2, 2, 3}, y = {2, 3, 4, 4};
  const auto less = mann_whitney_u(x, y, Alternative::less);
  EXPECT_FALSE(less.exact);
  EXPECT_DOUBLE_EQ(less.u, 2.5);
  EXPECT_NEAR(less.p, 0.06708459006406291, 1e-12);
  EXPECT_NEAR(mann_whitney_u(x, y, Alternative::greater).p, 0.9638666318672099, 1e-12);
  // Every value equal: no variance, no evidence either way.
  const auto flat = mann_whitney_u(std::vector<double>{1, 1, 1}, std::vector<double>{1, 1, 1},
                                   Alternative::less);
  EXPECT_EQ(flat.p, 1.0);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  // n1 = n2 = 25, separated, no ties: mean 312.5, var = 625 * 51 / 12 = 2656.25,
  // z = (0 + 0.5 - 312.5) / 51.5388 = -6.0536892, p = Phi(z) = 7.0783e-10.
  std::vector<double> x, y;
  for (int i = 0; i < 25; ++i) {
    x.push_back(i);
    y.push_back(100 + i);
  }
  const auto r = mann_whitney_u(x, y, Alternative::less);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p / 7.078281124247817e-10, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(mann_whitney_normal_cdf(25, 25, 0, 0), r.p);
}

TEST(MannWhitney, RejectsEmptyOrNonFiniteSamples) {
  const std::vector<double> some = {1, 2, 3}, none;
  EXPECT_THROW(mann_whitney_u(none, some, Alternative::less), std::invalid_argument);
  EXPECT_THROW(mann_whitney_u(some, std::vector<double>{1, std::nan("")}, Alternative::less),
               std::invalid_argument);
  EXPECT_THROW(mann_whitney_exact_counts(21, 3), std::invalid_argument);
}

TEST(MannWhitney, HolmAdjustsStepDownInTheInputOrder) {
  // Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06.
  const auto adjusted = holm_adjust(std::vector<double>{0.01, 0.04, 0.03, 0.005});
  const std::vector<double> expected = {0.03, 0.06, 0.06, 0.02};
  ASSERT_EQ(adjusted.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(adjusted[i], expected[i], 1e-15);
  EXPECT_EQ(holm_adjust(std::vector<double>{0.5, 0.9}), (std::vector<double>{1.0, 1.0}));
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
}

// ---- bench.json files ------------------------------------------------------------------------

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

struct FakeCase {
  std::string name;
  std::vector<double> limit_fraction;  // empty: no counter (a probe, or the absolute fallback)
  std::vector<double> real_time_ns;    // empty: derived from limit_fraction
};

// A Google Benchmark JSON document as `--benchmark_out_format=json` writes it, with a median
// aggregate per case (which the reader must ignore).
Json bench_doc(const std::vector<FakeCase>& cases) {
  Json benchmarks = Json::array();
  for (const auto& c : cases) {
    const std::size_t n = std::max(c.limit_fraction.size(), c.real_time_ns.size());
    for (std::size_t i = 0; i < n; ++i) {
      Json e = {{"name", c.name},
                {"run_name", c.name},
                {"run_type", "iteration"},
                {"repetitions", n},
                {"repetition_index", i},
                {"threads", 1},
                {"iterations", 1000},
                {"real_time", c.real_time_ns.empty() ? 1000 / c.limit_fraction[i]
                                                     : c.real_time_ns[i]},
                {"cpu_time", 1000.0},
                {"time_unit", "ns"},
                {"bytes_per_second", 1e9}};
      if (!c.limit_fraction.empty()) e["limit_fraction"] = c.limit_fraction[i];
      benchmarks.push_back(e);
    }
    benchmarks.push_back({{"name", c.name + "_median"},
                          {"run_name", c.name},
                          {"run_type", "aggregate"},
                          {"aggregate_name", "median"},
                          {"repetitions", n},
                          {"real_time", 1.0},
                          {"cpu_time", 1.0},
                          {"time_unit", "ns"},
                          {"limit_fraction", 123.0}});
  }
  return {{"context", {{"num_cpus", 2}}}, {"benchmarks", benchmarks}};
}

void write_bench(const fs::path& dir, const std::vector<FakeCase>& cases) {
  write_text(dir / "bench.json", bench_doc(cases).dump(1));
}

std::string invalid_input_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidInput";
  return {};
}

std::string fmt_round(std::size_t i) { return "round-0" + std::to_string(i + 1); }

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

// Ten repetitions of a case near 0.8 of its limit, spread about +-2%, all distinct (exact test).
const std::vector<double> kSamples = {0.80,  0.81,  0.79,  0.805, 0.795,
                                      0.812, 0.788, 0.802, 0.798, 0.801};

TEST(BenchJson, ReadsSamplesPerCaseInRepetitionOrderIgnoringAggregates) {
  const ScratchDir dir;
  Json doc = bench_doc({{"kernel/avx2/x", {0.5, 0.6, 0.7}, {}}, {"probe/p", {}, {10, 20, 30}}});
  // Repetitions out of file order, and a time unit other than ns.
  std::swap(doc["benchmarks"][0], doc["benchmarks"][2]);
  for (auto& e : doc["benchmarks"]) {
    if (e["name"] == "probe/p") e["time_unit"] = "us";
  }
  write_text(dir / "bench.json", doc.dump());
  const auto cases = read_bench_json(dir.path(), 3);  // the directory form
  ASSERT_EQ(cases.size(), 2u);
  const BenchCase& k = cases.at("kernel/avx2/x");
  EXPECT_EQ(k.limit_fraction, (std::vector<double>{0.5, 0.6, 0.7}));
  EXPECT_EQ(k.repetitions(), 3u);
  EXPECT_FALSE(k.is_probe());
  EXPECT_EQ(k.counters.at("bytes_per_second"), (std::vector<double>{1e9, 1e9, 1e9}));
  EXPECT_FALSE(k.counters.contains("iterations"));
  const BenchCase& p = cases.at("probe/p");
  EXPECT_TRUE(p.is_probe());
  EXPECT_TRUE(p.limit_fraction.empty());
  EXPECT_EQ(p.real_time_ns, (std::vector<double>{10e3, 20e3, 30e3}));
  EXPECT_EQ(read_bench_json(dir / "bench.json").size(), 2u);  // the file form
}

TEST(BenchJson, MissingFileNotJsonAndNoBenchmarksArrayAreInvalidInput) {
  const ScratchDir dir;
  auto message = invalid_input_message([&] { read_bench_json(dir / "nope.json"); });
  EXPECT_TRUE(contains(message, "nope.json") && contains(message, "no such file")) << message;
  // A directory without bench.json names the bench.json it looked for.
  message = invalid_input_message([&] { read_bench_json(dir.path()); });
  EXPECT_TRUE(contains(message, "bench.json")) << message;

  write_text(dir / "text.json", "Benchmark  Time  CPU\n");
  message = invalid_input_message([&] { read_bench_json(dir / "text.json"); });
  EXPECT_TRUE(contains(message, "not JSON")) << message;

  for (const char* doc : {R"({"context": {}})", R"({"benchmarks": 3})", "[1, 2]"}) {
    write_text(dir / "foreign.json", doc);
    message = invalid_input_message([&] { read_bench_json(dir / "foreign.json"); });
    EXPECT_TRUE(contains(message, "\"benchmarks\" array")) << doc << ": " << message;
  }
}

TEST(BenchJson, WrongTypesNameTheFieldAndTheBenchmark) {
  const ScratchDir dir;
  const auto message_for = [&](const std::function<void(Json&)>& spoil) {
    Json doc = bench_doc({{"kernel/avx2/x", {0.5, 0.6, 0.7}, {}}});
    spoil(doc["benchmarks"][1]);
    write_text(dir / "bench.json", doc.dump());
    return invalid_input_message([&] { read_bench_json(dir.path(), 3); });
  };
  auto message = message_for([](Json& e) { e["real_time"] = "fast"; });
  EXPECT_TRUE(contains(message, "kernel/avx2/x") &&
              contains(message, "\"real_time\" is not a number"))
      << message;
  message = message_for([](Json& e) { e["limit_fraction"] = "high"; });
  EXPECT_TRUE(contains(message, "limit_fraction")) << message;
  message = message_for([](Json& e) { e["limit_fraction"] = -0.5; });
  EXPECT_TRUE(contains(message, "not positive")) << message;
  message = message_for([](Json& e) { e["name"] = 7; });
  EXPECT_TRUE(contains(message, "benchmarks[1]") && contains(message, "\"name\"")) << message;
  message = message_for([](Json& e) { e["time_unit"] = "fortnights"; });
  EXPECT_TRUE(contains(message, "time_unit")) << message;
  message = message_for([](Json& e) { e.erase("limit_fraction"); });
  EXPECT_TRUE(contains(message, "limit_fraction on 2 of 3")) << message;
  message = message_for([](Json& e) { e["repetition_index"] = 0; });
  EXPECT_TRUE(contains(message, "repetition_index 0 appears twice")) << message;
  message = message_for([](Json& e) {
    e["error_occurred"] = true;
    e["error_message"] = "oracle mismatch";
  });
  EXPECT_TRUE(contains(message, "oracle mismatch")) << message;
  message = message_for([](Json& e) { e = "entry"; });
  EXPECT_TRUE(contains(message, "not an object")) << message;
}

TEST(BenchJson, FewerRepetitionsThanRequiredIsInvalidInput) {
  const ScratchDir dir;
  write_bench(dir.path(), {{"kernel/avx2/x", {0.5, 0.6}, {}}});
  const auto message = invalid_input_message([&] { read_bench_json(dir.path(), 3); });
  EXPECT_TRUE(contains(message, "kernel/avx2/x") && contains(message, "2 repetition(s)") &&
              contains(message, "--benchmark_repetitions=3"))
      << message;
  EXPECT_EQ(read_bench_json(dir.path()).at("kernel/avx2/x").repetitions(), 2u);  // default 1
}

// ---- compare, end to end -------------------------------------------------------------------

struct Compared {
  int code = -1;
  std::string out;
};

Compared compare(const fs::path& base, const fs::path& current, CompareOptions options = {}) {
  options.base = base;
  options.current = current;
  std::ostringstream out;
  Compared result;
  result.code = run_compare(options, out);
  result.out = out.str();
  return result;
}

// The table row of a case.
std::string row(const std::string& table, const std::string& name) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) == 0) return line;
  }
  return "(no row for " + name + ")";
}

// Base and current, each two kernel cases and a probe, current's first case given `samples`.
struct Pair {
  ScratchDir base, current;
  explicit Pair(const std::vector<double>& samples) {
    const std::vector<double> probe = {10, 11, 10.5, 10.2, 10.8, 10.1, 10.9, 10.4, 10.6, 10.3};
    write_bench(base.path(), {{"kernel/avx2/a", kSamples, {}},
                              {"kernel/avx2/b", scaled(kSamples, 0.5), {}},
                              {"probe/inplace", {}, probe}});
    write_bench(current.path(), {{"kernel/avx2/a", samples, {}},
                                 {"kernel/avx2/b", scaled(kSamples, 0.5), {}},
                                 {"probe/inplace", {}, probe}});
  }
};

TEST(Compare, IdenticalSamplesPass) {
  const Pair files(kSamples);
  const auto r = compare(files.base.path(), files.current.path());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/a"), "ok")) << r.out;
  EXPECT_TRUE(contains(row(r.out, "probe/inplace"), "not gated")) << r.out;
  EXPECT_TRUE(contains(r.out, "compare: 0 REGRESSION")) << r.out;
}

TEST(Compare, TwentyPercentLowerAndSeparatedIsARegression) {
  const Pair files(scaled(kSamples, 0.8));
  const auto r = compare(files.base.path(), files.current.path());
  EXPECT_EQ(r.code, kExitFailed) << r.out;
  const auto line = row(r.out, "kernel/avx2/a");
  EXPECT_TRUE(contains(line, "REGRESSION") && contains(line, "-20.0%")) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/b"), "ok")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 REGRESSION")) << r.out;

  // compare.json beside CUR (a directory), with the verdict and the numbers.
  const Json doc = Json::parse(std::ifstream(files.current / "compare.json"));
  EXPECT_EQ(doc["schema"], "ropecheck.compare/1");
  EXPECT_EQ(doc["correction"], "holm");
  EXPECT_EQ(doc["gated_cases"], 2);
  EXPECT_EQ(doc["summary"]["exit_code"], 1);
  const auto& a = doc["cases"][0];
  EXPECT_EQ(a["name"], "kernel/avx2/a");
  EXPECT_EQ(a["verdict"], "REGRESSION");
  EXPECT_EQ(a["measure"], "limit_fraction");
  EXPECT_NEAR(a["change_percent"].get<double>(), -20, 1e-9);
  // Separated samples of 10 and 10: exact p = 1/C(20, 10), Holm-adjusted over 2 cases (the
  // smallest p is doubled).
  EXPECT_TRUE(a["exact"].get<bool>());
  EXPECT_NEAR(a["p_lower"].get<double>(), 1.0 / 184756, 1e-15);
  EXPECT_NEAR(a["p_adjusted"].get<double>(), 2.0 / 184756, 1e-15);
}

TEST(Compare, TwoPercentLowerIsBelowTheThresholdAndPasses) {
  const Pair files(scaled(kSamples, 0.98));
  const auto r = compare(files.base.path(), files.current.path());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/a"), "-2.0%")) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/a"), "ok")) << r.out;
  // With a threshold of 1% the same drop fails: it is significant.
  CompareOptions strict;
  strict.threshold_percent = 1;
  EXPECT_EQ(compare(files.base.path(), files.current.path(), strict).code, kExitFailed);
}

TEST(Compare, NoisyOverlappingSamplesAreNotSignificantAndPass) {
  // Medians 0.8 vs 0.74 (-7.5%), but the samples interleave: no evidence of a shift.
  const std::vector<double> base = {0.50, 1.10, 0.60, 1.00, 0.70, 0.90, 0.80, 0.85, 0.75, 0.95};
  const std::vector<double> noisy = {0.45, 1.08, 0.58, 0.98, 0.66, 0.88, 0.74, 0.82, 0.72, 0.6};
  const ScratchDir b, c;
  write_bench(b.path(), {{"kernel/avx2/a", base, {}}});
  write_bench(c.path(), {{"kernel/avx2/a", noisy, {}}});
  const auto r = compare(b.path(), c.path());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/a"), "not significant")) << r.out;
}

TEST(Compare, FasterIsReportedAndNeverFails) {
  const Pair files(scaled(kSamples, 1.2));
  const auto r = compare(files.base.path(), files.current.path());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/a"), "faster")) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/a"), "+20.0%")) << r.out;
}

TEST(Compare, NoOverlappingCaseIsInvalidInputAndExit2) {
  const ScratchDir b, c;
  write_bench(b.path(), {{"kernel/avx2/a", kSamples, {}}, {"probe/p", {}, {1, 2, 3}}});
  write_bench(c.path(), {{"kernel/avx2/z", kSamples, {}}, {"probe/p", {}, {1, 2, 3}}});
  const auto message = invalid_input_message([&] { compare(b.path(), c.path()); });
  EXPECT_TRUE(contains(message, "share no benchmark")) << message;
  const std::string base = b.path().string(), current = c.path().string();
  const char* argv[] = {"ropecheck", "compare", base.c_str(), current.c_str()};
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(4, argv, out, err), kExitUsage);
  EXPECT_TRUE(contains(err.str(), "share no benchmark")) << err.str();
}

TEST(Compare, CasesInOneFileOnlyAreListedAndDoNotFail) {
  const ScratchDir b, c;
  write_bench(b.path(), {{"kernel/avx2/a", kSamples, {}}, {"kernel/avx2/old", kSamples, {}}});
  write_bench(c.path(), {{"kernel/avx2/a", kSamples, {}}, {"kernel/avx2/new", kSamples, {}}});
  const auto r = compare(b.path(), c.path());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/old"), "only in base")) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/new"), "only in current")) << r.out;
}

TEST(Compare, WithoutLimitFractionTheTableSaysTheComparisonIsAbsolute) {
  const ScratchDir b, c;
  const std::vector<double> times = {100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1, 99.9, 100};
  write_bench(b.path(), {{"kernel/avx2/a", {}, times}});
  write_bench(c.path(), {{"kernel/avx2/a", {}, scaled(times, 1.25)}});  // 25% slower: 1/1.25
  const auto r = compare(b.path(), c.path());
  EXPECT_EQ(r.code, kExitFailed) << r.out;
  const auto line = row(r.out, "kernel/avx2/a");
  EXPECT_TRUE(contains(line, "absolute") && contains(line, "-20.0%") &&
              contains(line, "REGRESSION"))
      << r.out;
}

TEST(Compare, ExplicitJsonPathAndNoDefaultBesideAFile) {
  const Pair files(kSamples);
  const ScratchDir out;
  CompareOptions options;
  options.json_out = out / "gate.json";
  const auto r = compare(files.base / "bench.json", files.current / "bench.json", options);
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_TRUE(fs::exists(out / "gate.json"));
  EXPECT_FALSE(fs::exists(files.current / "compare.json"));
  // CUR given as a file: no compare.json unless asked for.
  compare(files.base / "bench.json", files.current / "bench.json");
  EXPECT_FALSE(fs::exists(files.current / "compare.json"));
}

TEST(Compare, BadThresholdAlphaOrTooFewRepetitionsAreInvalidInput) {
  const Pair files(kSamples);
  for (const double threshold : {-1.0, 100.0, std::nan("")}) {
    CompareOptions options;
    options.threshold_percent = threshold;
    EXPECT_THROW(compare(files.base.path(), files.current.path(), options), InvalidInput);
  }
  for (const double alpha : {0.0, 1.0, -0.1, std::nan("")}) {
    CompareOptions options;
    options.alpha = alpha;
    EXPECT_THROW(compare(files.base.path(), files.current.path(), options), InvalidInput);
  }
  const ScratchDir two;
  write_bench(two.path(), {{"kernel/avx2/a", {0.8, 0.81}, {}}});
  const auto message = invalid_input_message([&] { compare(files.base.path(), two.path()); });
  EXPECT_TRUE(contains(message, "fewer than the 3 needed")) << message;
}

TEST(Compare, TooFewRepetitionsForAnyVerdictSaySo) {
  // Three repetitions each: the smallest exact p is 1/20 = 0.05, never below alpha 0.05, so even
  // a 20% separated drop cannot be called a regression; the output warns instead of misleading.
  const ScratchDir b, c;
  write_bench(b.path(), {{"kernel/avx2/a", {0.80, 0.81, 0.79}, {}}});
  write_bench(c.path(), {{"kernel/avx2/a", {0.64, 0.65, 0.63}, {}}});
  const auto r = compare(b.path(), c.path());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_TRUE(contains(row(r.out, "kernel/avx2/a"), "not significant")) << r.out;
  EXPECT_TRUE(contains(r.out, "warning: ") && contains(r.out, "more repetitions")) << r.out;
}

// ---- compare, process-level samples ----------------------------------------------------------

// DIR/round-NN/bench.json for each process: three repetitions each, whose median is medians[i].
void write_runs(const fs::path& dir, const std::vector<double>& medians) {
  for (std::size_t i = 0; i < medians.size(); ++i) {
    const double m = medians[i];
    write_bench(dir / fmt_round(i), {{"kernel/avx2/a", {m * 0.9, m, m * 1.3}, {}}});
  }
}

TEST(Compare, DirectoriesOfRunsGiveOneSamplePerProcessTheirMedian) {
  const ScratchDir b, c;
  const std::vector<double> base = {0.80, 0.81, 0.79, 0.805, 0.795};
  write_runs(b.path(), base);
  write_runs(c.path(), scaled(base, 0.8));
  const auto r = compare(b.path(), c.path());
  // Five processes a side, fully separated: exact p = 1/252 < 0.05.
  EXPECT_EQ(r.code, kExitFailed) << r.out;
  const auto line = row(r.out, "kernel/avx2/a");
  EXPECT_TRUE(contains(line, "REGRESSION") && contains(line, "0.8000") && contains(line, "-20.0%"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "samples: one per process (median of its repetitions), 5 base and 5 "
                              "current bench.json files"))
      << r.out;
  const auto json = Json::parse(test::slurp(c / "compare.json"));
  EXPECT_EQ(json["samples"], "processes");
  EXPECT_EQ(json["cases"][0]["base_repetitions"], 5);
}

TEST(Compare, OneRunAgainstADirectoryOfRunsOrTooFewProcessesIsInvalidInput) {
  const ScratchDir runs, single, two;
  write_runs(runs.path(), {0.8, 0.81, 0.79});
  write_bench(single.path(), {{"kernel/avx2/a", kSamples, {}}});
  const auto mixed = invalid_input_message([&] { compare(single.path(), runs.path()); });
  EXPECT_TRUE(contains(mixed, "same kind")) << mixed;
  write_runs(two.path(), {0.8, 0.81});
  const auto few = invalid_input_message([&] { compare(runs.path(), two.path()); });
  EXPECT_TRUE(contains(few, "fewer than the 3 processes needed")) << few;
}

}  // namespace
}  // namespace ropecheck
