// Attention benchmark cases (see attention_cases.h).
#include "bench/attention_cases.h"

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/format/case_name.h"
#include "impls/attention/attention.h"
#include "impls/attention/one_blas_thread.h"
#include "impls/registry.h"
#include "bench/random_data.h"
#include "bench/same_run_limit.h"
#include "core/isa.h"
#include "core/thread_team.h"
#include "core/tolerance.h"

namespace ropecheck::bench {
namespace {

// Issue 3's target: T = 2048, d = 128, 2 threads, at least 0.60 of the probe's GFLOP/s.
double goal_for(const AttentionProblem& p, int blas_threads) {
  return p.tokens == 2048 && p.head_dim == 128 && blas_threads == 2 ? 0.60 : 0;
}

// The causal half only, whatever blocking the implementation does above the diagonal.
double attention_flops(const AttentionProblem& p) {
  const auto t = static_cast<double>(p.tokens);
  return 2 * (2.0 * p.head_dim * t * (t + 1) / 2) * kAttentionHeads;
}

// The RoPE of the RoPE forms: Llama's (head_dim features, base 1e4, interleaved), fp64 angles as
// the fast kernel forms them.
RopeSpec rope_spec(int head_dim) {
  return {head_dim, head_dim, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
}

const RopeImpl& fast_kernel() {
  return *find_rope("kernel/" + std::string(to_string(dispatched_isa())));
}

AttentionShape shape_of(const AttentionProblem& p, std::int64_t tokens) {
  return {tokens, kAttentionHeads, p.kv_heads, p.head_dim, true};
}

// out = attention of (q, k, v) in the case's form: q and k rotated in place first (separate, what
// a model does after the QKV projection), or inside attention (fused); on the case's threads
// (attention's team, each member's sgemms on one OpenBLAS thread: attention.h). A peer attends
// alone, at the case's threads of its own.
void attend_in_form(AttentionRope rope, const AttentionImpl* peer, const AttentionShape& shape,
                    PositionIds positions, std::span<float> q, std::span<float> k, std::span<const float> v,
                    std::span<float> out, int threads) {
  const RopeSpec spec = rope_spec(shape.head_dim);
  const AttentionWork work{.threads = threads};
  if (peer != nullptr) {
    peer->run(shape, nullptr, {}, q, k, v, out, threads);
    return;
  }
  switch (rope) {
    case AttentionRope::none:
      attention_blas(shape, q, k, v, out, work);
      break;
    case AttentionRope::separate:
      fast_kernel().apply(spec, HeadTensor{q, shape.tokens, shape.q_heads, shape.head_dim},
                          HeadTensor{k, shape.tokens, shape.kv_heads, shape.head_dim}, positions, threads);
      attention_blas(shape, q, k, v, out, work);
      break;
    case AttentionRope::fused:
      attention_blas_rope_fused(shape, spec, positions, q, k, v, out, work);
      break;
  }
}

// "" when the case's form, on the case's threads, agrees with attention_naive (on q and k rotated
// by the fast kernel, for the RoPE forms) on a small causal problem that crosses attention_blas's
// 128-row blocks (and a peer's 64-row tiles). The bound is the error model of the attention
// property (properties/attention_properties.cc), made coarse with Cauchy-Schwarz (sum_c |q_c k_c|
// <= |q||k|) and maxima over the whole problem, with the rounding of K and V where the
// implementation keeps them narrower (core/tolerance.h storage_rounding_error: a score moves by at
// most scale |q| |dk| <= u_s max_s + scale |q| sqrt(d) u_s n_min, an output by u_s max(max|v|,
// n_min)): a smoke check that catches a wrong mask, head or scale (errors of order 1), not a
// tolerance study.
std::string check_against_naive(const AttentionProblem& problem, AttentionRope rope, const AttentionImpl* peer,
                                 int threads, std::string_view name) {
  const int head_dim = problem.head_dim;
  const AttentionShape shape = shape_of(problem, 160);
  const auto q_n = static_cast<std::size_t>(shape.tokens * shape.q_heads * head_dim);
  const auto kv_n = static_cast<std::size_t>(shape.tokens * shape.kv_heads * head_dim);
  auto q = random_floats(q_n, 11), k = random_floats(kv_n, 12);
  const auto v = random_floats(kv_n, 13);
  std::vector<std::int64_t> positions(static_cast<std::size_t>(shape.tokens));
  for (std::size_t t = 0; t < positions.size(); ++t) positions[t] = static_cast<std::int64_t>(t);
  std::vector<float> got(q_n), want(q_n);
  auto q_in = q, k_in = k;
  attend_in_form(rope, peer, shape, positions, q_in, k_in, v, got, threads);
  if (rope != AttentionRope::none) {  // the reference on separately rotated q and k
    fast_kernel().apply(rope_spec(head_dim), HeadTensor{q, shape.tokens, shape.q_heads, head_dim},
                        HeadTensor{k, shape.tokens, shape.kv_heads, head_dim}, positions);
  }
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
  const StorageType kv = peer != nullptr ? peer->kv_storage() : StorageType::fp32;
  const double u_kv = storage_unit_roundoff(kv), floor_kv = u_kv * storage_min_normal(kv);
  const double scale = 1 / std::sqrt(static_cast<double>(head_dim));
  const double max_s = max_q * max_k * scale;  // |S_ij| bound
  const double dk = u_kv * max_s + scale * max_q * std::sqrt(static_cast<double>(head_dim)) * floor_kv;
  const double ds = gamma32(head_dim) * (max_s + dk) + kUnitRoundoff32 * max_s + dk;  // error of one score
  const double g = gamma32(static_cast<double>(shape.tokens));        // a softmax or P V sum
  const double e = 2 * ds + kUnitRoundoff32 * 2 * max_s + 4 * kUnitRoundoff32 + g;            // relative error of a P_ij
  const double dv = u_kv * max_v + floor_kv;
  for (std::size_t i = 0; i < q_n; ++i) {
    const double bound = max_v * (e + g * (1 + e)) + dv * (1 + e) * (1 + g) + 2 * kUnitRoundoff32 * std::abs(want[i]);
    if (!(std::abs(got[i] - want[i]) <= bound)) {  // NaN fails too
      return fmt::format("{} differs from attention_naive at element {}: {} vs {} (bound {:.3g})", name, i, got[i],
                         want[i], bound);
    }
  }
  return "";
}

// The limit at the case's thread count: C = A B^T (t x t from t x d), attention's first sgemm at
// full size, once per head, the rows shared by a team of the case's size as attention shares its
// tasks, each member's sgemms on one OpenBLAS thread. (OpenBLAS's own threading of a small sgemm
// scales badly: at 512 tokens its 2-thread sgemm ran slower than its 1-thread one, so attention's
// team read 1.42 of such a limit.) A head's product each: one team a pass, as one a call of
// attention, so that a small problem's team start weighs the same on both sides.
void sgemm_on_team(int threads, int t, int d, const float* a, const float* b, float* c) {
  run_team(threads, [&](int member) {
    const int begin = t * member / threads, end = t * (member + 1) / threads;
    if (begin == end) return;
    for (int head = 0; head < kAttentionHeads; ++head) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, end - begin, t, d, 1.0f,
                  a + std::ptrdiff_t{begin} * d, d, b, d, 0.0f, c + std::ptrdiff_t{begin} * t, t);
    }
  });
}

std::string case_name(const AttentionCase& c) {
  return registered_name(AttentionCaseName{kAttentionHeads, c.problem.tokens, c.problem.head_dim, c.blas_threads,
                                           c.rope, c.problem.kv_heads,
                                           c.peer != nullptr ? std::string(c.peer->id()) : std::string()});
}

template <typename Vector>
void fill_random(Vector& into, std::size_t n, unsigned seed) {
  const auto values = random_floats(n, seed);
  into.assign(values.begin(), values.end());
}

void bench_attention(benchmark::State& state, AttentionCase* c) {
  // The case's threads are attention's team's and the limit's; OpenBLAS stays at one thread, its
  // pool parked, for the whole case (the check included: it runs as the case is timed).
  const OneBlasThread one_blas_thread(c->blas_threads > 1);
  const int t = static_cast<int>(c->problem.tokens), d = c->problem.head_dim;
  std::call_once(c->prepared, [c, t, d] {
    try {
      c->error = check_against_naive(c->problem, c->rope, c->peer, c->blas_threads, case_name(*c));
    } catch (const std::exception& e) {  // a peer that fails or declines its call
      c->error = fmt::format("{}: {}", case_name(*c), e.what());
    }
    const auto q_n = static_cast<std::size_t>(c->problem.tokens * kAttentionHeads * d);
    const auto kv_n = static_cast<std::size_t>(c->problem.tokens * c->problem.kv_heads * d);
    fill_random(c->q, q_n, 1), fill_random(c->k, kv_n, 2), fill_random(c->v, kv_n, 3);
    c->positions.resize(static_cast<std::size_t>(t));
    for (int m = 0; m < t; ++m) c->positions[static_cast<std::size_t>(m)] = m;
    c->out.resize(q_n);
    fill_random(c->probe_a, static_cast<std::size_t>(t) * d, 4);
    fill_random(c->probe_b, static_cast<std::size_t>(t) * d, 5);
    c->probe_c.resize(static_cast<std::size_t>(t) * t);
  });
  if (!c->error.empty() && !(c->time_failing && c->peer != nullptr)) {
    state.SkipWithError(c->error.c_str());
    return;
  }
  const AttentionShape shape = shape_of(c->problem, c->problem.tokens);
  const double flops = attention_flops(c->problem);
  const double sgemm_flops = 2.0 * t * t * d * kAttentionHeads;
  const auto attend = [&] {
    // separate rotates q and k in place again each pass: a rotation, so they stay in range.
    attend_in_form(c->rope, c->peer, shape, c->positions, c->q, c->k, c->v, c->out, c->blas_threads);
    benchmark::DoNotOptimize(c->out.data());
    benchmark::ClobberMemory();
  };
  const auto sgemm = [&] {
    sgemm_on_team(c->blas_threads, t, d, c->probe_a.data(), c->probe_b.data(), c->probe_c.data());
    benchmark::DoNotOptimize(c->probe_c.data());
  };
  // One thread computes on this thread: CPU time; more: wall time (same_run_limit.h). A peer at
  // one thread too (ggml's graph_compute runs its thread 0 on the caller's).
  try {
    if (c->blas_threads == 1) {
      run_with_limit<Clock>(state, attend, sgemm, sgemm_flops);
    } else {
      run_with_limit<WallClock>(state, attend, sgemm, sgemm_flops);
    }
  } catch (const std::exception& e) {  // a peer that fails while timed: this case's error
    state.SkipWithError(e.what());
    return;
  }
  if (!c->error.empty()) {  // a peer timed despite its failed check says so in every entry
    state.SetLabel("check FAILED (timed with --time-failing)");
    state.counters["oracle_failed"] = 1;
  }
  // limit_fraction above compares passes; per flop, attention's pass does `flops` and the
  // sgemm's sgemm_flops: (flops / attention time) / (sgemm_flops / sgemm time).
  auto& fraction = state.counters["limit_fraction"];
  fraction = benchmark::Counter(fraction.value * flops / sgemm_flops, fraction.flags);
  state.counters["flops"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

std::vector<Comparison> register_attention_cases(std::deque<AttentionCase>& owner, std::span<const int> threads,
                                                 std::span<const AttentionImpl* const> peers, bool time_failing) {
  std::vector<Comparison> table;
  const auto add = [&owner](const AttentionCase& c) {
    // UseRealTime: OpenBLAS's (and a peer's) threads are not the benchmark thread's CPU time.
    AttentionCase& owned = owner.emplace_back(c.problem, c.blas_threads, c.rope, c.peer, c.time_failing);
    benchmark::RegisterBenchmark(case_name(owned).c_str(), bench_attention, &owned)
        ->UseRealTime()->Unit(benchmark::kMillisecond);
    return case_name(owned);
  };
  for (const AttentionProblem p : kAttentionProblems) {
    for (const int n : threads) {
      const std::string alone = add(AttentionCase(p, n, AttentionRope::none));
      // Attention alone against its probe; a RoPE form against attention alone (the same
      // flops counted: the ratio is attention's time over the form's).
      table.push_back({alone, "", goal_for(p, n)});
      if (p.with_rope) {
        for (const AttentionRope rope : {AttentionRope::separate, AttentionRope::fused}) {
          table.push_back({add(AttentionCase(p, n, rope)), alone, 0});
        }
      }
      // A peer against its probe, and against attention_blas: at one thread each over its own
      // same-run probe (by_fraction), what a load that changes between the two cases moves least;
      // at more by rate, as the report (reports/bench_tables.h AttentionPeerRow: a peer's pool
      // may still run beside its probe).
      if (!peer_problem(p)) continue;
      for (const AttentionImpl* peer : peers) {
        const std::string name = add(AttentionCase(p, n, AttentionRope::none, peer, time_failing));
        table.push_back({name, "", 0});
        table.push_back({name, alone, 0, n == 1});
      }
    }
  }
  return table;
}

}  // namespace ropecheck::bench
