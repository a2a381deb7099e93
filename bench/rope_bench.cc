// rope_bench: Google Benchmark over every registered RoPE implementation on model-shaped
// problems, beside an in-place streaming probe over the same bytes (the limit for in-place RoPE).
//   build/rope_bench --benchmark_min_time=0.2 --benchmark_repetitions=5
// Napkin math: RoPE reads and writes q and k once: 2 * 4 * tokens * (q_heads + k_heads) *
// head_dim bytes (GB = 1e9), plus cos/sin formed per token (not counted: formed, not read).
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <random>
#include <vector>

#include "ropecheck/registry.h"

namespace ropecheck {
namespace {

struct Shape {
  const char* name;  // the model it comes from
  std::int64_t tokens, q_heads, k_heads, head_dim;
  std::int64_t first_position = 0;  // positions first_position, first_position + 1, ...
};

// Shapes of real models (ggml test-backend-ops style).
constexpr Shape kShapes[] = {
    {"llama7b_prefill4096", 4096, 32, 32, 128},   // out of cache: 128 MiB of q and k
    {"llama7b_prefill512", 512, 32, 32, 128},
    {"llama3_8b_gqa_prefill512", 512, 32, 8, 128},
    {"gpt2_small_prefill512", 512, 8, 8, 64},     // in cache: 2 MiB
    {"llama7b_decode_at4095", 1, 32, 32, 128, 4095},
};

std::vector<float> random_floats(std::size_t n) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double bytes_moved(const Shape& s) {
  return 2.0 * sizeof(float) * static_cast<double>(s.tokens * (s.q_heads + s.k_heads) * s.head_dim);
}

void bench_rope(benchmark::State& state, const RopeImpl* impl, Shape shape) {
  RopeSpec spec;
  spec.head_dim = spec.rotary_dim = static_cast<int>(shape.head_dim);
  auto q = random_floats(static_cast<std::size_t>(shape.tokens * shape.q_heads * shape.head_dim));
  auto k = random_floats(static_cast<std::size_t>(shape.tokens * shape.k_heads * shape.head_dim));
  std::vector<std::int64_t> positions(static_cast<std::size_t>(shape.tokens));
  for (std::size_t t = 0; t < positions.size(); ++t) {
    positions[t] = shape.first_position + static_cast<std::int64_t>(t);
  }
  for (auto _ : state) {
    impl->apply(spec, HeadTensor{q, shape.tokens, shape.q_heads, shape.head_dim},
                HeadTensor{k, shape.tokens, shape.k_heads, shape.head_dim}, positions);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes_moved(shape)) * state.iterations());
}

// The machine's limit for an in-place update of the same bytes: x[i] = s * x[i].
void bench_inplace_probe(benchmark::State& state, Shape shape) {
  auto x = random_floats(static_cast<std::size_t>(bytes_moved(shape) / 2 / sizeof(float)));
  float scale = 1.0f;
  for (auto _ : state) {
    for (auto& v : x) v *= scale;
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
    scale = scale == 1.0f ? -1.0f : 1.0f;  // keeps values bounded and the loop honest
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes_moved(shape)) * state.iterations());
}

void register_benchmarks() {
  for (const Shape& shape : kShapes) {
    benchmark::RegisterBenchmark(fmt::format("probe/inplace_scale/{}", shape.name).c_str(),
                                 bench_inplace_probe, shape);
    for (const RopeImpl* impl : rope_implementations()) {
      if (!impl->capabilities().available) continue;  // an ISA this CPU lacks
      // The dense definition is O(head_dim^2) per head: benchmark it on the smallest shape only.
      if (impl->id() == "rotation_matrix/scalar" && shape.head_dim > 64) continue;
      benchmark::RegisterBenchmark(fmt::format("{}/{}", impl->id(), shape.name).c_str(),
                                   bench_rope, impl, shape);
    }
  }
}

}  // namespace
}  // namespace ropecheck

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  ropecheck::register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
