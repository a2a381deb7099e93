// The own fused RoPE + paged KV-cache kernels (fused_cache/<level>, impls/fused/fused_rope_cache.h)
// out of cache, each beside two things in the same run, interleaved in the same slices
// (same_run_limit.h):
// - the same-run limit over the SAME bytes: a probe pass that scales q in place, reads k and v
//   and stores the cache rows, token group by token group as the kernel walks them
//   (limit_fraction);
// - the two passes at the same level, done as an engine would do them well
//   (rotate_in_place_then_write: kernel/<level> rotating q and the caller's k in place, then the
//   fused kernel's own vectorized stores): speedup_vs_two_pass = their time / the fused call's,
//   beside speedup_allowed = bytes(two passes) / bytes(fused) and speedup_fraction, their ratio.
// Bytes, in the buffers' own storage: fused 2q + k + v + cache rows; two passes 2k more (k
// written back and read again). Slots are the tokens' order (slot t for token t), as a prefill
// into fresh blocks; FP8 with one scale, divided (vLLM's direction).
// Shapes (several times a 32 MiB L3): Llama-style 8 q = 8 kv heads of 128 at 8192 tokens (144 MiB
// with an fp16 cache), Llama 3 8B's 32 q over 8 kv heads at 4096 tokens (112 MiB), and DeepSeek-V3's
// MLA: 128 q heads of 64 rotary dims (q_pe), k_pe 64 and the 512-wide latent, 2048 tokens (71 MiB).
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/aligned_buffer.h"
#include "bench/left_out.h"
#include "bench/ratio_table.h"
#include "core/isa.h"
#include "core/kv_cache.h"
#include "impls/fused/rope_cache_impl.h"

namespace ropecheck::bench {

struct FusedCacheShape {
  std::string_view name;
  std::int64_t tokens, q_heads, kv_heads, head_dim;
  std::int64_t latent_dim;  // 0, or the MLA latent's width (then kv_heads 1, head_dim k_pe's)
};

inline constexpr FusedCacheShape kFusedCacheShapes[] = {
    {"llama_8x8_prefill8192", 8192, 8, 8, 128, 0},
    {"llama3_8b_gqa_prefill4096", 4096, 32, 8, 128, 0},
    {"deepseek_v3_mla_prefill2048", 2048, 128, 1, 64, 512},
};

// One shape's q, k, v, positions and slots, shared by every level and storage; cache bytes for
// the widest storage benched (2 bytes). Allocated on first use.
struct FusedCacheWorkload {
  explicit FusedCacheWorkload(const FusedCacheShape& s) : shape(s) {}
  const FusedCacheShape shape;
  std::once_flag allocated;
  AlignedVector<float> q, k, v;
  AlignedVector<std::byte> k_cache, v_cache;
  std::vector<std::int64_t> positions, slots;
  void allocate();
};

// The cache the cases write: NHD (MLA for DeepSeek), blocks of 16, one block per 16 tokens, FP8
// with one scale, divided; padding `padding` (every slot is valid here: the rule changes nothing).
KvCacheSpec fused_cache_spec(const FusedCacheShape& s, CacheStorage storage,
                             PaddingRule padding = PaddingRule::rotate_q_only);

// Bytes one pass moves (above): q read and written, k and v read, the cache rows written.
struct PassBytes {
  double q, k, v, cache;
  double fused() const { return 2 * q + k + v + cache; }
  double two_pass() const { return fused() + 2 * k; }  // k written back, and read again
};

// One timed pass over a workload into `cache`: the call an implementation gets, the bytes it
// moves, and the same-run probe over those bytes, walked as the kernels walk them (groups of
// tokens of at least 16 KiB of q: q scaled in place, k and v read, the cache rows stored). The
// own kernels' cases and the peers' share it.
struct FusedCachePass {
  RopeCacheCall call;
  PassBytes bytes;
  std::function<void()> probe;
};
FusedCachePass fused_cache_pass(FusedCacheWorkload& w, const KvCacheSpec& cache);

struct FusedCacheCase {
  const RopeCacheImpl* impl;
  Isa level;
  FusedCacheWorkload* workload;
  CacheStorage storage;
};

struct FusedCacheCases {
  std::deque<FusedCacheWorkload> workloads;
  std::deque<FusedCacheCase> cases;
};

// Registers fused_cache/<level> for every level this CPU runs (the others into `left_out`), on
// every shape: NHD (MLA for DeepSeek) with fp16, bf16 and fp8_e4m3 caches (MLA: bf16 and
// fp8_e4m3), one benchmark thread. Returns the ratio-table rows: each case against its probe.
std::vector<Comparison> register_fused_cache_cases(FusedCacheCases& owner, LeftOut& left_out);

}  // namespace ropecheck::bench
