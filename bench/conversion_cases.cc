// The 16-bit kernels' ceilings (conversion_cases.h).
#include "bench/conversion_cases.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "bench/format/case_name.h"
#include "core/logging.h"
#include "bench/rope_walk.h"
#include "bench/same_run_limit.h"

namespace ropecheck::bench {
namespace {

// The level's conversions over this thread's tokens, in the probe's token groups; the probe
// interleaved as for every case (same_run_limit.h). The bench's values are normal numbers, which a
// round trip gives back unchanged: every pass converts the same values.
template <typename Element, typename RoundTrip>
void time_conversion(benchmark::State& state, const Workload& w, AlignedVector<Element>& q_all,
                     AlignedVector<Element>& k_all, RoundTrip round_trip) {
  const RopeShape& shape = w.shape;
  const TokenRange r = my_tokens(state, shape.tokens);
  const auto q = token_rows(std::span(q_all), shape.q_heads * shape.head_dim, r);
  const auto k = token_rows(std::span(k_all), shape.k_heads * shape.head_dim, r);
  const double bytes = 2.0 * sizeof(Element) * static_cast<double>(q.size() + k.size());  // read + write
  const auto step = [&] {
    walk_token_groups(q, k, r.count, [&](std::span<Element> q_part, std::span<Element> k_part) {
      round_trip(q_part.data(), static_cast<std::int64_t>(q_part.size()));
      round_trip(k_part.data(), static_cast<std::int64_t>(k_part.size()));
    });
    benchmark::ClobberMemory();
  };
  run_with_limit(state, step, [&] { probe_pass(as_floats(q), as_floats(k), r.count); }, bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

void bench_conversion(benchmark::State& state, ConversionCase* c) {
  Workload& w = *c->workload;
  if (c->level->storage == StorageType::fp16) {
    w.allocate_fp16();
    time_conversion(state, w, w.q_half, w.k_half, c->level->fp16);
  } else {
    w.allocate_bf16();
    time_conversion(state, w, w.q16, w.k16, c->level->bf16);
  }
}

}  // namespace

std::vector<Comparison> register_conversion_cases(std::deque<ConversionCase>& owner, std::deque<Workload>& workloads,
                                                  std::span<const int> threads) {
  std::vector<Comparison> table;
  for (const kernels::RoundTripLevel& level : kernels::round_trip_levels()) {
    if (std::string why; !level.available(&why)) {
      progress_log().info("bench: skipping {}: {}", level.id, why);
      continue;
    }
    for (Workload& w : workloads) {
      if (std::find(std::begin(kConversionShapes), std::end(kConversionShapes), w.shape.name) ==
          std::end(kConversionShapes)) {
        continue;
      }
      const std::string name = registered_name(ConversionCaseName{std::string(level.id), w.shape.name});
      auto* b = benchmark::RegisterBenchmark(name.c_str(), bench_conversion, &owner.emplace_back(&level, &w))
                    ->UseRealTime();
      for (const int n : threads) {
        if (n <= w.shape.tokens) b->Threads(n);
      }
      table.push_back({name, "", 0});
      for (const char* layout : {"interleaved", "half_split"}) {
        const RopeCaseName kernel{std::string(level.kernel_id), w.shape.name, layout};
        table.push_back({registered_name(kernel), name, 0, true});
      }
    }
  }
  return table;
}

}  // namespace ropecheck::bench
