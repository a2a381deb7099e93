// Sinusoidal-table benchmark cases (see table_cases.h).
#include "bench/table_cases.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/format/case_name.h"
#include "bench/probes.h"
#include "impls/registry.h"
#include "bench/same_run_limit.h"

namespace ropecheck::bench {
namespace {

void bench_table(benchmark::State& state, TableCase* c) {
  const SinusoidalSpec spec{static_cast<int>(c->shape.d_model), 10000.0};
  std::vector<std::int64_t> positions(static_cast<std::size_t>(c->shape.positions));
  for (std::size_t p = 0; p < positions.size(); ++p) positions[p] = static_cast<std::int64_t>(p);
  std::vector<float> out(positions.size() * static_cast<std::size_t>(c->shape.d_model));
  const double bytes = 4.0 * static_cast<double>(out.size());
  run_with_limit(
      state,
      [&] {
        c->impl->table(spec, positions, out);
        benchmark::ClobberMemory();
      },
      [&] { inplace_scale(out, -1.0f); }, 2 * bytes);  // -1: two passes restore it (probes.cc)
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

}  // namespace

std::vector<Comparison> register_table_cases(std::deque<TableCase>& owner) {
  std::vector<Comparison> table;
  for (const SinusoidalImpl* impl : sinusoidal_implementations()) {
    for (const TableShape& shape : kTableShapes) {
      const std::string name = registered_name(TableCaseName{std::string(impl->id()), shape.name});
      benchmark::RegisterBenchmark(name.c_str(), bench_table, &owner.emplace_back(impl, shape))
          ->UseRealTime();
      table.push_back({name, "", 0});
    }
  }
  return table;
}

}  // namespace ropecheck::bench
