// The fused RoPE + KV-cache cases (fused_cache_cases.h).
#include "bench/fused_cache_cases.h"

#include <benchmark/benchmark.h>

#include <cmath>

#include "bench/format/case_name.h"
#include "bench/probes.h"
#include "bench/same_run_limit.h"
#include "impls/fused/fused_rope_cache.h"
#include "impls/registry.h"

namespace ropecheck::bench {
namespace {

bool is_mla(const FusedCacheShape& s) { return s.latent_dim > 0; }
std::int64_t v_dim(const FusedCacheShape& s) { return is_mla(s) ? s.latent_dim : s.head_dim; }

void bench_fused(benchmark::State& state, FusedCacheCase* c) {
  FusedCacheWorkload& w = *c->workload;
  const FusedCachePass pass = fused_cache_pass(w, fused_cache_spec(w.shape, c->storage));
  const RopeCacheCall& call = pass.call;
  const PassBytes& bytes = pass.bytes;
  const auto step = [&] {
    c->impl->apply(call);
    benchmark::ClobberMemory();
  };
  const auto two_passes = [&] {
    rotate_in_place_then_write(c->level, call, w.k);
    benchmark::ClobberMemory();
  };
  const double speedup = run_with_limit(state, step, pass.probe, bytes.fused(), two_passes);
  const double allowed = bytes.two_pass() / bytes.fused();
  state.counters["speedup_vs_two_pass"] = speedup;
  state.counters["speedup_allowed"] = allowed;
  state.counters["speedup_fraction"] = speedup / allowed;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes.fused()) * state.iterations());
}

}  // namespace

KvCacheSpec fused_cache_spec(const FusedCacheShape& s, CacheStorage storage, PaddingRule padding) {
  KvCacheSpec c;
  c.layout = is_mla(s) ? CacheLayout::mla : CacheLayout::nhd;
  c.storage = storage;
  c.block_size = 16;
  c.blocks = (s.tokens + c.block_size - 1) / c.block_size;
  c.kv_heads = s.kv_heads;
  c.head_dim = s.head_dim;
  c.latent_dim = s.latent_dim;
  c.padding = padding;
  c.scale_direction = ScaleDirection::divide;
  if (is_fp8(storage)) {
    c.k_scale = {0.05f};
    if (!is_mla(s)) c.v_scale = {0.05f};
  }
  return c;
}

FusedCachePass fused_cache_pass(FusedCacheWorkload& w, const KvCacheSpec& cache) {
  w.allocate();
  const FusedCacheShape& s = w.shape;
  FusedCachePass pass;
  RopeCacheCall& call = pass.call;
  call.spec.head_dim = static_cast<int>(s.head_dim);
  call.spec.rotary_dim = static_cast<int>(s.head_dim);
  call.spec.layout = Layout::interleaved;  // vLLM's is_neox_style=False (GPT-J style); DeepSeek's too
  call.cache = cache;
  call.q = w.q;
  call.q_heads = s.q_heads;
  call.k = w.k;
  call.v = w.v;
  call.tokens = s.tokens;
  call.positions = w.positions;
  call.slots = w.slots;
  const auto cache_bytes = static_cast<std::size_t>(cache_elements(cache) * element_bytes(cache.storage));
  call.k_cache = std::span(w.k_cache).first(cache_bytes);
  call.v_cache = is_mla(s) ? std::span<std::byte>() : std::span(w.v_cache).first(cache_bytes);
  const auto t = static_cast<double>(s.tokens);
  const double rows = static_cast<double>(s.kv_heads * (s.head_dim + v_dim(s)));  // k's and v's (mla: k_pe, latent)
  pass.bytes = {4 * t * static_cast<double>(s.q_heads * s.head_dim), 4 * t * static_cast<double>(s.kv_heads * s.head_dim),
                4 * t * static_cast<double>(s.kv_heads * v_dim(s)), t * rows * element_bytes(cache.storage)};
  const auto q_token = static_cast<std::size_t>(s.q_heads * s.head_dim);
  const auto k_token = static_cast<std::size_t>(s.kv_heads * s.head_dim);
  const auto v_token = static_cast<std::size_t>(s.kv_heads * v_dim(s));
  const std::size_t k_row_bytes =
      static_cast<std::size_t>(s.kv_heads * (is_mla(s) ? s.head_dim + s.latent_dim : s.head_dim) * element_bytes(cache.storage));
  const std::size_t v_row_bytes = is_mla(s) ? 0 : k_row_bytes;
  const std::size_t group = std::max<std::size_t>(1, 16384 / (q_token * sizeof(float)));
  pass.probe = [&w, k_cache = call.k_cache, v_cache = call.v_cache, q_token, k_token, v_token, k_row_bytes,
                v_row_bytes, group, tokens = static_cast<std::size_t>(s.tokens), sink = 0.0f]() mutable {
    for (std::size_t t = 0; t < tokens; t += group) {
      const std::size_t n = std::min(group, tokens - t);
      inplace_scale(std::span(w.q).subspan(t * q_token, n * q_token), -1.0f);
      sink += stream_read(std::span<const float>(w.k).subspan(t * k_token, n * k_token));
      sink += stream_read(std::span<const float>(w.v).subspan(t * v_token, n * v_token));
      stream_fill(k_cache.subspan(t * k_row_bytes, n * k_row_bytes), std::byte{0x11});
      if (v_row_bytes > 0) stream_fill(v_cache.subspan(t * v_row_bytes, n * v_row_bytes), std::byte{0x11});
    }
    benchmark::DoNotOptimize(sink);
    benchmark::ClobberMemory();
  };
  return pass;
}

void FusedCacheWorkload::allocate() {
  std::call_once(allocated, [&] {
    const auto t = static_cast<std::size_t>(shape.tokens);
    // Values of a trained model's size; a rotation keeps each pair's norm, so passes keep them.
    const auto fill = [](AlignedVector<float>& x, std::size_t n, float phase) {
      x.resize(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(phase + 0.37f * static_cast<float>(i % 4093));
    };
    fill(q, t * static_cast<std::size_t>(shape.q_heads * shape.head_dim), 0.1f);
    fill(k, t * static_cast<std::size_t>(shape.kv_heads * shape.head_dim), 0.2f);
    fill(v, t * static_cast<std::size_t>(shape.kv_heads * v_dim(shape)), 0.3f);
    const auto cache = fused_cache_spec(shape, CacheStorage::bf16);
    const auto bytes = static_cast<std::size_t>(cache_elements(cache) * element_bytes(CacheStorage::bf16));
    k_cache.assign(bytes, std::byte{0});
    if (!is_mla(shape)) v_cache.assign(bytes, std::byte{0});
    positions.resize(t);
    slots.resize(t);
    for (std::size_t i = 0; i < t; ++i) positions[i] = slots[i] = static_cast<std::int64_t>(i);
  });
}

std::vector<Comparison> register_fused_cache_cases(FusedCacheCases& owner, LeftOut& left_out) {
  std::vector<Comparison> table;
  for (const FusedCacheShape& shape : kFusedCacheShapes) owner.workloads.emplace_back(shape);
  for (const Isa level : built_levels()) {
    const std::string id = fmt::format("fused_cache/{}", to_string(level));
    const RopeCacheImpl* impl = find_rope_cache(id);
    if (impl == nullptr) continue;
    if (std::string why; !impl->available(&why)) {
      left_out.add(id, why);
      continue;
    }
    for (FusedCacheWorkload& w : owner.workloads) {
      for (const CacheStorage storage : {CacheStorage::fp16, CacheStorage::bf16, CacheStorage::fp8_e4m3}) {
        if (is_mla(w.shape) && storage == CacheStorage::fp16) continue;  // DeepSeek's caches: bf16, fp8
        const FusedCacheCaseName name{id, std::string(w.shape.name), is_mla(w.shape) ? "mla" : "nhd",
                                      std::string(to_string(storage))};
        const std::string registered = registered_name(name);
        benchmark::RegisterBenchmark(registered.c_str(), bench_fused, &owner.cases.emplace_back(impl, level, &w, storage))
            ->UseRealTime();
        table.push_back({registered, "", 0});
      }
    }
  }
  return table;
}

}  // namespace ropecheck::bench
