// The own fused QK-norm + RoPE kernels (qk_norm_rope/<level>, impls/fused/qk_norm_rope.cc) out of
// cache, in the engines' call form, each beside two things in the same run, interleaved in the
// same slices (same_run_limit.h):
// - the same-run limit over the SAME bytes: a probe pass that scales each token's q and k rows in
//   place and reads its cos/sin cache row, token group by token group as the kernel walks them
//   (limit_fraction);
// - the same level's two passes (norm_then_rope/<level>: every row normalized in place in the
//   storage, then the level's plain call): speedup_vs_two_pass = their time / the fused call's,
//   beside speedup_allowed = bytes(two passes) / bytes(fused).
// Bytes, in the buffer's storage: fused 2 (q + k) + the cache rows + the weights; two passes
// 2 (q + k) more (every row written by the norm and read again by the rotation).
// Shape: Qwen3-8B's attention input, a packed qkv [tokens, (32 + 8 + 8) * 128], 32 q and 8 kv
// heads of 128, half-split (neox) rotation from a cos/sin cache, QK-norm with Qwen3's plain
// weights and eps 1e-6, in fp32, 8192 tokens: q + k are 160 MiB in fp32, 80 MiB in bf16 and
// fp16, several times a 32 MiB L3.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <string_view>
#include <vector>

#include "bench/aligned_buffer.h"
#include "bench/left_out.h"
#include "bench/ratio_table.h"
#include "core/isa.h"
#include "core/storage.h"
#include "impls/fused/rope_form_impl.h"

namespace ropecheck::bench {

struct QkNormRopeShape {
  std::string_view name;
  std::int64_t tokens, q_heads, kv_heads, head_dim;
};

inline constexpr QkNormRopeShape kQkNormRopeShapes[] = {
    {"qwen3_8b_prefill8192", 8192, 32, 8, 128},
};

// The targets (issue 52): of the same-run limit, and the speed-up over the same level's two passes.
inline constexpr double kQkNormRopeLimitGoal = 0.85;
inline constexpr double kQkNormRopeSpeedupGoal = 1.3;

// One shape's packed qkv in one storage, its positions, the cos/sin cache and the weights.
// Allocated on first use.
struct QkNormRopeWorkload {
  QkNormRopeWorkload(const QkNormRopeShape& s, StorageType st) : shape(s), storage(st) {}
  const QkNormRopeShape shape;
  const StorageType storage;
  std::once_flag allocated;
  AlignedVector<std::byte> qkv;
  std::vector<std::int64_t> positions;
  std::vector<float> cache, q_weight, k_weight;
  void allocate();
};

struct QkNormRopeCase {
  const RopeFormImpl* fused;
  const RopeFormImpl* two_pass;
  QkNormRopeWorkload* workload;
};

struct QkNormRopeCases {
  std::deque<QkNormRopeWorkload> workloads;
  std::deque<QkNormRopeCase> cases;
};

// Bytes one pass moves: q and k rows read and written, each token's cache row read, the weights.
struct QkNormRopeBytes {
  double rows, cache, weights;
  double fused() const { return 2 * rows + cache + weights; }
  double two_pass() const { return fused() + 2 * rows; }  // every row written and read once more
};

// What the own cases time, for the peers' cases beside them (qk_norm_rope_peer_cases.h): the call
// on the allocated workload (cache angles, Qwen3's plain norm at `precision`), its bytes, and the
// same-run probe over the same bytes.
RopeFormCall qk_norm_rope_call(QkNormRopeWorkload& w, NormPrecision precision);
QkNormRopeBytes qk_norm_rope_bytes(const QkNormRopeWorkload& w);
std::function<void()> qk_norm_rope_probe(QkNormRopeWorkload& w);

// Registers qk_norm_rope/<level> for every SIMD level this CPU runs (the others into
// `left_out`; scalar is not a speed level), on every shape, in fp32, bf16 and fp16, one benchmark
// thread. Returns the ratio-table rows.
std::vector<Comparison> register_qk_norm_rope_cases(QkNormRopeCases& owner, LeftOut& left_out);

}  // namespace ropecheck::bench
