// attention_bench: causal attention_blas (8 heads) beside a same-run sgemm probe of the T x T x d
// product it is built from, with OpenBLAS pinned to 1 and then 2 threads, then a ratio table.
// Each case is first checked against attention_naive on a small problem.
//   /tmp/build-bench/attention_bench --benchmark_min_time=0.5 --benchmark_repetitions=5
// Napkin math: causal attention does S = Q K^T and O = P V on the lower triangle only:
// 2 products * 2 d * T (T + 1) / 2 flops a head (T = 2048, d = 128, 8 heads: 8.6 GFLOP), and moves
// q, k, v in and out once: 4 tensors * 4 bytes * T * heads * d (33.5 MB). The probe, one full
// T x T x d sgemm: 2 T^2 d flops (1.07 GFLOP), (2 T d + T^2) * 4 bytes (18.9 MB).
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "ratio_table.h"
#include "ropecheck/attention.h"

namespace ropecheck {
namespace {

constexpr std::int64_t kHeads = 8;

struct Problem {
  std::int64_t tokens;
  int head_dim;
  std::int64_t elements() const { return tokens * kHeads * head_dim; }  // per q, k, v, out
};

// Issue 3's target: T = 2048, d = 128, 2 threads, at least 0.60 of the probe's GFLOP/s.
double goal_for(const Problem& p, int blas_threads) {
  return p.tokens == 2048 && p.head_dim == 128 && blas_threads == 2 ? 0.60 : 0;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// The causal half only, whatever blocking the implementation does above the diagonal.
double attention_flops(const Problem& p) {
  const auto t = static_cast<double>(p.tokens);
  return 2 * (2.0 * p.head_dim * t * (t + 1) / 2) * kHeads;
}

constexpr double kU = 0x1p-24;  // fp32 unit roundoff
double gamma(double n) { return n * kU / (1 - n * kU); }

// "" when attention_blas agrees with attention_naive on a small causal problem that crosses
// attention_blas's 128-row blocks. The bound is the error model of the attention property
// (properties/attention_properties.cc), made coarse with Cauchy-Schwarz (sum_c |q_c k_c| <= |q||k|)
// and maxima over the whole problem: a smoke check that catches a wrong mask, head or scale
// (errors of order 1), not a tolerance study.
std::string check_against_naive(int head_dim) {
  const AttentionShape shape{160, kHeads, kHeads, head_dim, true};
  const auto n = static_cast<std::size_t>(shape.tokens * kHeads * head_dim);
  const auto q = random_floats(n, 11), k = random_floats(n, 12), v = random_floats(n, 13);
  std::vector<float> got(n), want(n);
  attention_blas(shape, q, k, v, got);
  attention_naive(shape, q, k, v, want);

  const auto max_row_norm = [d = static_cast<std::size_t>(head_dim)](const std::vector<float>& x) {
    double largest = 0;
    for (std::size_t row = 0; row < x.size(); row += d) {
      double sum = 0;
      for (std::size_t c = row; c < row + d; ++c) sum += double{x[c]} * x[c];
      largest = std::max(largest, std::sqrt(sum));
    }
    return largest;
  };
  const double max_q = max_row_norm(q), max_k = max_row_norm(k);
  double max_v = 0;
  for (float x : v) max_v = std::max(max_v, double{std::abs(x)});
  const double max_s = max_q * max_k / std::sqrt(static_cast<double>(head_dim));  // |S_ij| bound
  const double ds = gamma(head_dim) * max_s + kU * max_s;           // error of one score
  const double g = gamma(static_cast<double>(shape.tokens));        // a softmax or P V sum
  const double e = 2 * ds + kU * 2 * max_s + 4 * kU + g;            // relative error of a P_ij
  for (std::size_t i = 0; i < n; ++i) {
    const double bound = max_v * (e + g * (1 + e)) + 2 * kU * std::abs(want[i]);
    if (!(std::abs(got[i] - want[i]) <= bound)) {  // NaN fails too
      return fmt::format("attention_blas differs from attention_naive at element {}: {} vs {} "
                         "(bound {:.3g})", i, got[i], want[i], bound);
    }
  }
  return "";
}

struct AttentionCase {
  AttentionCase(Problem p, int threads) : problem(p), blas_threads(threads) {}
  const Problem problem;
  const int blas_threads;
  std::once_flag prepared;  // Google Benchmark calls a case many times: check and fill once
  std::string error;
  std::vector<float> q, k, v, out;
};

void bench_attention(benchmark::State& state, AttentionCase* c) {
  openblas_set_num_threads(c->blas_threads);  // before the check: it runs as the case is timed
  std::call_once(c->prepared, [c] {
    c->error = check_against_naive(c->problem.head_dim);
    const auto n = static_cast<std::size_t>(c->problem.elements());
    c->q = random_floats(n, 1), c->k = random_floats(n, 2), c->v = random_floats(n, 3);
    c->out.resize(n);
  });
  if (!c->error.empty()) {
    state.SkipWithError(c->error.c_str());
    return;
  }
  const AttentionShape shape{c->problem.tokens, kHeads, kHeads, c->problem.head_dim, true};
  for (auto _ : state) {
    attention_blas(shape, c->q, c->k, c->v, c->out);
    benchmark::DoNotOptimize(c->out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(4 * static_cast<std::int64_t>(sizeof(float)) * c->problem.elements() *
                          state.iterations());
  state.counters["flops"] = benchmark::Counter(attention_flops(c->problem),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// C = A B^T, T x T x d: the shape of attention's S = Q K^T for one head.
void bench_sgemm_probe(benchmark::State& state, Problem p, int blas_threads) {
  openblas_set_num_threads(blas_threads);
  const int t = static_cast<int>(p.tokens), d = p.head_dim;
  const auto a = random_floats(static_cast<std::size_t>(t) * d, 4);
  const auto b = random_floats(static_cast<std::size_t>(t) * d, 5);
  std::vector<float> c(static_cast<std::size_t>(t) * t);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, 1.0f, a.data(), d, b.data(), d,
                0.0f, c.data(), t);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(sizeof(float)) * (2 * t * d + t * t) *
                          state.iterations());
  state.counters["flops"] =
      benchmark::Counter(2.0 * t * t * d, benchmark::Counter::kIsIterationInvariantRate);
}

// The probe right before each case (close in time, so that noise hits both alike); UseRealTime
// throughout: OpenBLAS's threads are not the benchmark thread's CPU time.
std::vector<bench::Comparison> register_benchmarks(std::deque<AttentionCase>& cases) {
  std::vector<bench::Comparison> table;
  for (const Problem p : {Problem{512, 64}, Problem{512, 128}, Problem{2048, 128}}) {
    for (const int threads : {1, 2}) {
      const std::string probe = fmt::format("probe/sgemm_TxTxd/{}x{}x{}/blas_threads:{}",
                                            p.tokens, p.tokens, p.head_dim, threads);
      benchmark::RegisterBenchmark(probe.c_str(), bench_sgemm_probe, p, threads)
          ->UseRealTime()->Unit(benchmark::kMillisecond);
      const std::string name =
          fmt::format("attention_blas/causal_{}heads/tokens:{}/head_dim:{}/blas_threads:{}", kHeads,
                      p.tokens, p.head_dim, threads);
      benchmark::RegisterBenchmark(name.c_str(), bench_attention, &cases.emplace_back(p, threads))
          ->UseRealTime()->Unit(benchmark::kMillisecond);
      table.push_back({name, probe, goal_for(p, threads)});
    }
  }
  return table;
}

}  // namespace
}  // namespace ropecheck

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  std::deque<ropecheck::AttentionCase> cases;
  const auto table = ropecheck::register_benchmarks(cases);
  ropecheck::bench::RatioReporter reporter("flops", "GFLOP/s", "1e9 flops/s, causal half only");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return reporter.print_table(table);
}
