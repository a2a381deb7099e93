// The kernels' rotation ceilings (rotation_cases.h).
#include "bench/rotation_cases.h"

#include <benchmark/benchmark.h>

#include <string>

#include "bench/ceiling_timing.h"
#include "bench/format/case_name.h"

namespace ropecheck::bench {
namespace {

// A rotation keeps the norm of every pair (up to rounding), so the bench's values stay normal
// numbers of the same size however many passes run, as under the kernels' own in-place passes.
void bench_rotation(benchmark::State& state, RotationCase* c) {
  Workload& w = *c->workload;
  const kernels::RotationAloneLevel& level = *c->level;
  const bool interleaved = c->layout == Layout::interleaved;
  switch (level.storage) {
    case StorageType::fp32:
      w.allocate();
      time_ceiling(state, w, w.q, w.k, [&](float* x, std::int64_t n) { level.fp32(x, n, interleaved); });
      break;
    case StorageType::fp16:
      w.allocate_fp16();
      time_ceiling(state, w, w.q_half, w.k_half, [&](Fp16* x, std::int64_t n) { level.fp16(x, n, interleaved); });
      break;
    case StorageType::bf16:
      w.allocate_bf16();
      time_ceiling(state, w, w.q16, w.k16, [&](std::uint16_t* x, std::int64_t n) { level.bf16(x, n, interleaved); });
      break;
  }
}

}  // namespace

std::vector<Comparison> register_rotation_cases(std::deque<RotationCase>& owner, std::deque<Workload>& workloads,
                                                std::span<const int> threads, LeftOut& left_out) {
  std::vector<Comparison> table;
  // One level on one shape: both layouts, each beside its kernel.
  const auto register_level = [&](const kernels::RotationAloneLevel& level, Workload& w) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      const std::string layout_name(to_string(layout));
      const std::string name = registered_name(RotationCaseName{std::string(level.id), w.shape.name, layout_name});
      auto* b = benchmark::RegisterBenchmark(name.c_str(), bench_rotation, &owner.emplace_back(&level, &w, layout))
                    ->UseRealTime();
      for (const int n : threads) {
        if (n <= w.shape.tokens) b->Threads(n);
      }
      table.push_back({name, "", 0});
      const RopeCaseName kernel{std::string(level.kernel_id), w.shape.name, layout_name};
      table.push_back({registered_name(kernel), name, 0, true});
    }
  };
  for_each_level_and_shape(kernels::rotation_alone_levels(), kRotationShapes, workloads, left_out, register_level);
  return table;
}

}  // namespace ropecheck::bench
