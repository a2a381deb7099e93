// The 16-bit kernels' ceilings (conversion_cases.h).
#include "bench/conversion_cases.h"

#include <benchmark/benchmark.h>

#include <string>

#include "bench/ceiling_timing.h"
#include "bench/format/case_name.h"

namespace ropecheck::bench {
namespace {

// The bench's values are normal numbers, which a round trip gives back unchanged: every pass
// converts the same values.
void bench_conversion(benchmark::State& state, ConversionCase* c) {
  Workload& w = *c->workload;
  if (c->level->storage == StorageType::fp16) {
    w.allocate_fp16();
    time_ceiling(state, w, w.q_half, w.k_half, c->level->fp16);
  } else {
    w.allocate_bf16();
    time_ceiling(state, w, w.q16, w.k16, c->level->bf16);
  }
}

}  // namespace

std::vector<Comparison> register_conversion_cases(std::deque<ConversionCase>& owner, std::deque<Workload>& workloads,
                                                  std::span<const int> threads, LeftOut& left_out) {
  std::vector<Comparison> table;
  // One level on one shape, beside its kernel in both layouts.
  const auto register_level = [&](const kernels::RoundTripLevel& level, Workload& w) {
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
  };
  for_each_level_and_shape(kernels::round_trip_levels(), kConversionShapes, workloads, left_out, register_level);
  return table;
}

}  // namespace ropecheck::bench
