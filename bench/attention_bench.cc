// attention_bench: attention_blas (causal) beside an sgemm probe of the same shapes, in one run.
//   build/attention_bench --benchmark_min_time=0.5
// Napkin math: causal attention over T tokens, H heads, head_dim d does S = Q K^T and O = P V on
// the lower triangle: 2 * (2 * d * T * (T + 1) / 2) * H flops. The probe is one full
// T x T x d sgemm (2 T^2 d flops), the product attention's first step is made of.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <random>
#include <vector>

#include "ropecheck/attention.h"

namespace ropecheck {
namespace {

std::vector<float> random_floats(std::size_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void bench_attention(benchmark::State& state) {
  const std::int64_t tokens = state.range(0), heads = 8;
  const int d = static_cast<int>(state.range(1));
  const auto n = static_cast<std::size_t>(tokens * heads * d);
  const auto q = random_floats(n), k = random_floats(n), v = random_floats(n);
  std::vector<float> out(n);
  for (auto _ : state) {
    attention_blas({tokens, heads, heads, d, true}, q, k, v, out);
    benchmark::DoNotOptimize(out.data());
  }
  const double flops = 2.0 * 2.0 * d * static_cast<double>(tokens) * (tokens + 1) / 2 * heads;
  state.counters["flops"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void bench_sgemm_probe(benchmark::State& state) {
  const auto t = static_cast<int>(state.range(0)), d = static_cast<int>(state.range(1));
  const auto a = random_floats(static_cast<std::size_t>(t) * d), b = random_floats(static_cast<std::size_t>(t) * d);
  std::vector<float> c(static_cast<std::size_t>(t) * t);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, 1.0f, a.data(), d, b.data(), d,
                0.0f, c.data(), t);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["flops"] = benchmark::Counter(2.0 * t * t * d, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(bench_sgemm_probe)->Name("probe/sgemm_TxTxd")->Args({512, 128})->Args({2048, 128})->Unit(benchmark::kMillisecond);
BENCHMARK(bench_attention)->Name("attention_blas/causal_8heads")->Args({512, 64})->Args({512, 128})
    ->Args({2048, 128})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ropecheck

BENCHMARK_MAIN();
