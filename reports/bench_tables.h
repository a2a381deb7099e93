// bench.json cases as the report reads them: the median rate in GB/s or GFLOP/s (1e9), and the baseline comparison of
// limit_fraction medians with its bootstrap interval.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/format/bench_json.h"
#include "bench/format/case_name.h"
#include "reports/case_records.h"
#include "reports/data.h"
#include "reports/stats.h"

namespace ropecheck {

// Case names are parsed once, by the one grammar of bench/format/case_name.h, into the records
// of BenchData (reports/case_records.h); the tables below read those.
using bench::AttentionCaseName;
using bench::RopeCaseName;

struct BaselineRow {
  std::string name;
  double current_median = 0, baseline_median = 0;
  RatioInterval interval;  // of limit_fraction medians, current / baseline
};
// Every case with limit_fraction in both runs, in the current run's file order.
std::vector<BaselineRow> compare_to_baseline(const BenchData& current, const BenchData& baseline);

// Peers: implementations from outside, through the plugin ABI ("plugin/..." cases, e.g. the
// PyTorch forms of peers/torch) or as Python callables ("python/..."), each beside ropecheck's fastest fp32 kernel ("kernel/...") on the
// same shape, layout and thread count in the same run. ratio = kernel rate / peer rate: the
// peer's time over the kernel's on the same bytes (> 1: ropecheck is faster).
struct PeerRow {
  std::string peer, shape, layout;
  int threads = 0;
  CaseRate peer_rate;
  std::string best_kernel;                   // empty: no kernel case on that shape and layout
  std::optional<double> best_kernel_rate;    // GB/s, median
  std::optional<double> ratio;               // best_kernel_rate / peer rate
  // The same kernel's limit_fraction over the peer's: the speed-up with each side divided by its
  // own same-run probe, which a load that changes between the two cases moves far less.
  std::optional<double> fraction_ratio;
  bool oracle_failed = false;                // timed despite a failed oracle check
  // The rate through the ABI's process boundary (q and k copied in and out, a request and a
  // reply), median; empty for a bench.json from before peers were timed in their worker.
  std::optional<double> boundary_rate;
};
// Every peer RoPE case of the run (is_peer), in file order.
std::vector<PeerRow> peer_rows(const BenchData& bench);

// Attention peers (attention plugins, "plugin/..." attention cases: llama.cpp's flash attention)
// beside attention_blas and attention_fused on the same problem (tokens, head_dim, kv heads) and
// thread count in the same run. ratio = attention_blas's over the peer's; < 1: the peer is faster.
// At one thread by limit_fraction: each over its own same-run sgemm probe (the same flops
// counted), what a load that changes between the two cases moves least. At more, by rate: a
// peer's own pool may still be running when its probe does (ggml's threads wait busily after a
// graph), which slowed the peer's probe to half of attention_blas's in the same processes
// (docs/results.md), and its fraction rose with it.
struct AttentionPeerRow {
  std::string peer;
  long tokens = 0, kv_heads = 0, heads = 0;
  int head_dim = 0, threads = 0;
  CaseRate peer_rate;
  std::optional<CaseRate> blas, fused;  // attention_blas alone; attention_fused (with RoPE) where it ran
  std::optional<double> ratio;          // attention_blas over the peer (above: which measure)
  bool oracle_failed = false;           // timed despite a failed check
};
// Every attention peer case of the run, in file order.
std::vector<AttentionPeerRow> attention_peer_rows(const BenchData& bench);

// RoPE with attention (bench/format/case_name.h AttentionRope): per problem and thread count,
// attention alone and each RoPE form's time over attention alone's (the same flops are counted
// for all three, so time ratio = rate alone / rate of the form; 1.05 = 5% slower).
struct RopeAttentionRow {
  long tokens = 0;
  int head_dim = 0, threads = 0;
  std::optional<double> alone_rate;                      // GFLOP/s, median
  std::optional<double> separate_ratio, fused_ratio;     // time / attention alone's time
};
// Every problem that has a RoPE form in the run, in file order (ropecheck's own cases only).
std::vector<RopeAttentionRow> rope_attention_rows(const BenchData& bench);

// The thread sweep: each RoPE case (implementation, shape, layout), each 16-bit conversion
// ceiling and each attention problem measured at more than one thread count in the run, with its
// rate, same-run probe and limit_fraction at each. A kernel's probe runs on the same threads as
// the case, each thread over its own share (bench/rope_cases.cc); attention's is an sgemm a head,
// shared by a team of as many threads (bench/attention_cases.cc).
struct ThreadSweepRow {
  std::string subject;                 // the case name without its thread count
  std::map<int, CaseRate> by_threads;  // thread count -> medians
};
// In file order of each subject's first case; subjects measured at one count only are left out.
std::vector<ThreadSweepRow> thread_sweep_rows(const BenchData& bench);

// The fast kernel's kept cos/sin rows (bench/rope_cases.cc kept_rows_counters), per decode case
// that has them, in file order.
struct KeptRowsRow {
  std::string name;
  double row_bytes = 0;            // kept per position
  double kept_call_seconds = 0;    // the case's median time: a call at a kept position
  double fresh_block_seconds = 0;  // a call that forms its position's block of 32 rows first
};
std::vector<KeptRowsRow> kept_rows_rows(const BenchData& bench);

// A 16-bit kernel level against its ceiling (bench/conversion_cases.h): the level's conversions
// alone on a shape and thread count, and the kernel of that level on the same shape, threads and
// each layout, from the same run.
struct CeilingRow {
  std::string conversion, kernel, shape;
  int threads = 0;
  CaseRate ceiling;                                      // the conversions alone
  std::optional<CaseRate> interleaved, half_split;       // the kernel's cases, where they ran
  // The kernel's limit_fraction over the conversions' (each against its own same-run probe)
  std::optional<double> interleaved_share, half_split_share;
};
// Every conversion case of the run, in file order.
std::vector<CeilingRow> ceiling_rows(const BenchData& bench);

// A SIMD kernel level against its rotation alone (bench/rotation_cases.h): the level's rotation
// with cos and sin in registers on a shape, layout and thread count, and the kernel of that level
// on the same, from the same run.
struct RotationRow {
  std::string rotation, kernel, shape, layout;
  int threads = 0;
  CaseRate ceiling;                   // the rotation alone
  std::optional<CaseRate> kernel_rate;  // the kernel's case, where it ran
  std::optional<double> share;        // the kernel's limit_fraction over the rotation's
};
// Every rotation case of the run, in file order.
std::vector<RotationRow> rotation_rows(const BenchData& bench);

// A multi-axis RoPE case (a vision-language shape) beside its 1D twin, the same implementation,
// layout and threads on the same tensors at one axis (bench/format/shapes.h), from the same run.
struct MultiAxisRow {
  std::string impl, shape, twin, layout;
  int threads = 0;
  CaseRate multi_axis, one_axis;
  std::optional<double> share;  // the two limit_fraction medians' ratio, multi-axis over 1D
};
// Every multi-axis case whose twin ran, in file order.
std::vector<MultiAxisRow> multi_axis_rows(const BenchData& bench);

// A backward-pass case beside the same implementation's forward on the same tensors, layout and
// threads, from the same run (core/spec.h, Pass).
struct BackwardRow {
  std::string impl, shape, layout;
  int threads = 0;
  bool in_worker = false;  // a peer timed in its worker
  CaseRate backward, forward;
  std::optional<double> difference;  // backward's limit_fraction minus forward's (medians)
};
// Every backward case whose forward ran, in file order.
std::vector<BackwardRow> backward_rows(const BenchData& bench);

// The fused RoPE + KV-cache kernels (bench/fused_cache_cases.h), issue 56's targets: a fraction of
// the same-run limit over the call's own bytes, and the speed-up over the same level's two passes
// (timed in the same pauses) beside what the bytes saved allow.
inline constexpr double kFusedLimitGoal = 0.85;
inline constexpr double kFusedSpeedupGoal = 0.85;  // of speedup_allowed
struct FusedCacheRow {
  std::string impl, shape, cache;  // cache: "<layout> <storage>"
  CaseRate rate;
  std::optional<double> speedup, allowed, speedup_fraction;  // medians
  bool limit_met() const { return rate.limit_fraction && *rate.limit_fraction >= kFusedLimitGoal; }
  bool speedup_met() const { return speedup_fraction && *speedup_fraction >= kFusedSpeedupGoal; }
};
// Every fused cache case of the run, in file order.
std::vector<FusedCacheRow> fused_cache_rows(const BenchData& bench);

// The fused QK-norm + RoPE kernels (bench/qk_norm_rope_cases.h), issue 52's targets: a fraction of
// the same-run limit over the call's own bytes, and the speed-up over the same level's two passes
// (timed in the same pauses).
inline constexpr double kQkNormRopeLimitGoal = 0.85;
inline constexpr double kQkNormRopeSpeedupGoal = 1.3;
struct QkNormRopeRow {
  std::string impl, shape, form;  // form: "<angles> <storage>"
  CaseRate rate;
  std::optional<double> speedup, allowed;  // medians
  bool limit_met() const { return rate.limit_fraction && *rate.limit_fraction >= kQkNormRopeLimitGoal; }
  bool speedup_met() const { return speedup && *speedup >= kQkNormRopeSpeedupGoal; }
};
// Every fused QK-norm + RoPE case of the run, in file order.
std::vector<QkNormRopeRow> qk_norm_rope_rows(const BenchData& bench);

}  // namespace ropecheck
