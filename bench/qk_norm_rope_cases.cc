// The fused QK-norm + RoPE cases (qk_norm_rope_cases.h).
#include "bench/qk_norm_rope_cases.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/format/case_name.h"
#include "bench/probes.h"
#include "bench/same_run_limit.h"
#include "core/rope_form.h"
#include "impls/registry.h"

namespace ropecheck::bench {
namespace {

std::int64_t qkv_heads(const QkNormRopeShape& s) { return s.q_heads + 2 * s.kv_heads; }

RopeSpec qk_norm_rope_spec(const QkNormRopeShape& s) {
  RopeSpec spec;
  spec.head_dim = static_cast<int>(s.head_dim);
  spec.rotary_dim = static_cast<int>(s.head_dim);
  spec.base = 1e6;                     // Qwen3's rope_theta
  spec.layout = Layout::half_split;    // is_neox_style
  return spec;
}

}  // namespace

RopeFormCall qk_norm_rope_call(QkNormRopeWorkload& w, NormPrecision precision) {
  const QkNormRopeShape& s = w.shape;
  RopeFormCall call;
  call.spec = qk_norm_rope_spec(s);
  call.storage = w.storage;
  call.buffer = w.qkv;
  call.tokens = s.tokens;
  const std::int64_t row = qkv_heads(s) * s.head_dim;
  call.q = {s.q_heads, 0, row, s.head_dim};
  call.k = {s.kv_heads, s.q_heads * s.head_dim, row, s.head_dim};
  call.positions = w.positions;
  call.angles = AngleSource::cos_sin_cache;
  call.cos_sin_cache = w.cache;
  call.cache_rows = s.tokens;
  call.has_norm = true;
  call.norm.eps = 1e-6;
  call.norm.weight = NormWeight::plain;
  call.norm.precision = precision;
  call.q_weight = w.q_weight;
  call.k_weight = w.k_weight;
  return call;
}

QkNormRopeBytes qk_norm_rope_bytes(const QkNormRopeWorkload& w) {
  const QkNormRopeShape& s = w.shape;
  const double element = element_bytes(w.storage);
  const auto t = static_cast<double>(s.tokens);
  return {element * t * static_cast<double>((s.q_heads + s.kv_heads) * s.head_dim),
          4 * t * static_cast<double>(s.head_dim), 2 * 4 * static_cast<double>(s.head_dim)};
}

// Every cache line of `rows` asked for ahead of its use.
void prefetch_rows(std::span<const float> rows) {
  const auto* bytes = reinterpret_cast<const char*>(rows.data());
  for (std::size_t at = 0; at < rows.size_bytes(); at += 64) __builtin_prefetch(bytes + at, 0, 3);
}

// The probe: each token's q and k rows (one span: k follows q in the packed row) scaled in place
// as floats over the same bytes (a sign flip of bf16 and fp16 values too: the data stays finite),
// the group's cache rows read; groups of at least 16 KiB of rows, as the kernel walks.
std::function<void()> qk_norm_rope_probe(QkNormRopeWorkload& w) {
  return [&w] {
    const QkNormRopeShape& s = w.shape;
    const auto row_floats = static_cast<std::size_t>((s.q_heads + s.kv_heads) * s.head_dim * element_bytes(w.storage) / 4);
    const auto stride_floats = static_cast<std::size_t>(qkv_heads(s) * s.head_dim * element_bytes(w.storage) / 4);
    const auto cache_row = static_cast<std::size_t>(s.head_dim);
    const std::size_t group = std::max<std::size_t>(1, 4096 / row_floats);
    const std::span<float> rows(reinterpret_cast<float*>(w.qkv.data()), w.qkv.size() / 4);
    float sink = 0;
    const auto tokens = static_cast<std::size_t>(s.tokens);
    for (std::size_t t0 = 0; t0 < tokens; t0 += group) {
      const std::size_t n = std::min(group, tokens - t0);
      for (std::size_t i = t0; i < t0 + n; ++i) {
        // The rows two tokens ahead prefetched, as the fused kernels do: without it the probe
        // kept fewer loads in flight than the kernel and the "limit" came out below the kernel.
        if (i + 2 < tokens) prefetch_rows(rows.subspan((i + 2) * stride_floats, row_floats));
        inplace_scale(rows.subspan(i * stride_floats, row_floats), -1.0f);
      }
      sink += stream_read(std::span<const float>(w.cache).subspan(t0 * cache_row, n * cache_row));
    }
    sink += stream_read(w.q_weight) + stream_read(w.k_weight);
    benchmark::DoNotOptimize(sink);
    benchmark::ClobberMemory();
  };
}

namespace {

void bench_qk_norm_rope(benchmark::State& state, QkNormRopeCase* c) {
  QkNormRopeWorkload& w = *c->workload;
  w.allocate();
  const RopeFormCall fused = qk_norm_rope_call(w, NormPrecision::fp32);
  const RopeFormCall passes = qk_norm_rope_call(w, NormPrecision::storage);
  const QkNormRopeBytes bytes = qk_norm_rope_bytes(w);
  const auto step = [&] {
    c->fused->apply(fused);
    benchmark::ClobberMemory();
  };
  const auto two_passes = [&] {
    c->two_pass->apply(passes);
    benchmark::ClobberMemory();
  };
  const std::function<void()> probe = qk_norm_rope_probe(w);
  const double speedup = run_with_limit(state, step, probe, bytes.fused(), two_passes);
  state.counters["speedup_vs_two_pass"] = speedup;
  state.counters["speedup_allowed"] = bytes.two_pass() / bytes.fused();
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes.fused()) * state.iterations());
}

}  // namespace

void QkNormRopeWorkload::allocate() {
  std::call_once(allocated, [&] {
    const auto t = static_cast<std::size_t>(shape.tokens);
    const auto elements = t * static_cast<std::size_t>(qkv_heads(shape) * shape.head_dim);
    qkv.assign(elements * static_cast<std::size_t>(element_bytes(storage)), std::byte{0});
    // Values of a trained model's size: a norm then a rotation keep them so, pass after pass.
    for (std::size_t i = 0; i < elements; ++i) {
      store_element(storage, qkv, static_cast<std::int64_t>(i), std::sin(0.1f + 0.37f * static_cast<float>(i % 4093)));
    }
    positions.resize(t);
    for (std::size_t i = 0; i < t; ++i) positions[i] = static_cast<std::int64_t>(i);
    cache = build_cos_sin_cache(qk_norm_rope_spec(shape), shape.tokens);
    for (std::int64_t f = 0; f < shape.head_dim; ++f) {
      q_weight.push_back(1.0f + 0.05f * std::sin(0.3f * static_cast<float>(f)));
      k_weight.push_back(1.0f + 0.05f * std::cos(0.3f * static_cast<float>(f)));
    }
  });
}

std::vector<Comparison> register_qk_norm_rope_cases(QkNormRopeCases& owner, LeftOut& left_out) {
  std::vector<Comparison> table;
  for (const QkNormRopeShape& shape : kQkNormRopeShapes) {
    for (const StorageType storage : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
      owner.workloads.emplace_back(shape, storage);
    }
  }
  for (const Isa level : built_levels()) {
    if (level == Isa::scalar) continue;  // the SIMD levels: scalar is not a speed level
    const std::string id = fmt::format("qk_norm_rope/{}", to_string(level));
    const RopeFormImpl* fused = find_rope_form(id);
    const RopeFormImpl* two_pass = find_rope_form(fmt::format("norm_then_rope/{}", to_string(level)));
    if (fused == nullptr || two_pass == nullptr) continue;
    if (std::string why; !fused->available(&why)) {
      left_out.add(id, why);
      continue;
    }
    for (QkNormRopeWorkload& w : owner.workloads) {
      const QkNormRopeCaseName name{id, std::string(w.shape.name), "cache", std::string(to_string(w.storage))};
      const std::string registered = registered_name(name);
      benchmark::RegisterBenchmark(registered.c_str(), bench_qk_norm_rope, &owner.cases.emplace_back(fused, two_pass, &w))
          ->UseRealTime();
      table.push_back({registered, "", 0});
    }
  }
  return table;
}

}  // namespace ropecheck::bench
