// How a kernel level's ceiling is registered and timed (conversion_cases.h, rotation_cases.h): on
// the levels this CPU runs and the shapes the ceiling is for, a bare pass over a RoPE workload's q
// and k, the very buffers the kernels stream, this benchmark thread's tokens in the probe's token
// groups, with the probe interleaved as for every case (same_run_limit.h).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>

#include "bench/left_out.h"
#include "bench/rope_cases.h"
#include "bench/rope_walk.h"
#include "bench/same_run_limit.h"

namespace ropecheck::bench {

// Calls each(level, workload) for every level this CPU runs (the others added to `left_out`) and
// every workload whose shape is one of `shapes`: the cases a ceiling registers.
template <typename Levels, typename Each>
void for_each_level_and_shape(const Levels& levels, std::span<const std::string_view> shapes,
                              std::deque<Workload>& workloads, LeftOut& left_out, Each each) {
  for (const auto& level : levels) {
    if (std::string why; !level.available(&why)) {
      left_out.add(std::string(level.id), why);
      continue;
    }
    for (Workload& w : workloads) {
      if (std::find(shapes.begin(), shapes.end(), w.shape.name) != shapes.end()) each(level, w);
    }
  }
}

// pass(x, n) over each group's q part, then its k part; bytes: each element read and written once.
template <typename Element, typename Pass>
void time_ceiling(benchmark::State& state, const Workload& w, AlignedVector<Element>& q_all,
                  AlignedVector<Element>& k_all, Pass pass) {
  const RopeShape& shape = w.shape;
  const TokenRange r = my_tokens(state, shape.tokens);
  const auto q = token_rows(std::span(q_all), shape.q_heads * shape.head_dim, r);
  const auto k = token_rows(std::span(k_all), shape.k_heads * shape.head_dim, r);
  const double bytes = 2.0 * sizeof(Element) * static_cast<double>(q.size() + k.size());  // read + write
  const auto step = [&] {
    walk_token_groups(q, k, r.count, [&](std::span<Element> q_part, std::span<Element> k_part) {
      pass(q_part.data(), static_cast<std::int64_t>(q_part.size()));
      pass(k_part.data(), static_cast<std::int64_t>(k_part.size()));
    });
    benchmark::ClobberMemory();
  };
  run_with_limit(state, step, [&] { probe_pass(as_floats(q), as_floats(k), r.count); }, bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

}  // namespace ropecheck::bench
