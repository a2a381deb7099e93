// bench.json's cases as typed records, read once: each case's name parsed by the one grammar of
// bench/format/case_name.h and its medians taken, so that every table and plot of the report
// filters and groups records instead of parsing names again (reports/data.h holds them).
#pragma once

#include <optional>
#include <string>

#include "bench/format/bench_json.h"
#include "bench/format/case_name.h"

namespace ropecheck {

// The case's median throughput and its probe's, in the case's own unit.
struct CaseRate {
  std::string unit;  // "GB/s" (bytes_per_second) or "GFLOP/s" (flops); empty: no rate counter
  std::optional<double> rate, probe_rate;  // medians over repetitions, in `unit`
  std::optional<double> limit_fraction;    // median
};
CaseRate case_rate(const BenchCase& c);

// True for a case timed although it failed its check against the oracle (`bench --time-failing`
// counts oracle_failed = 1 in each of its repetitions).
bool oracle_failed(const BenchCase& c);

// The median of counter `name` over the repetitions divided by `scale`; empty without it.
std::optional<double> counter_median(const BenchCase& c, const char* name, double scale);

// One case: at most one of rope, backward, attention, table, conversion, rotation and fused_cache is set (none:
// a probe, or a name of none of the grammars).
struct CaseRecord {
  std::string name;  // bench.json's run_name, the key of BenchData::cases
  std::optional<bench::RopeCaseName> rope;      // RoPE's forward: what every plot and table reads
  std::optional<bench::RopeCaseName> backward;  // its backward pass: the backward table's
  std::optional<bench::AttentionCaseName> attention;
  std::optional<bench::TableCaseName> table;
  std::optional<bench::ConversionCaseName> conversion;  // a 16-bit kernel's ceiling
  std::optional<bench::RotationCaseName> rotation;      // a SIMD kernel level's rotation ceiling
  std::optional<bench::FusedCacheCaseName> fused_cache;  // a fused RoPE + KV-cache kernel
  std::optional<bench::QkNormRopeCaseName> qk_norm_rope;  // a fused QK-norm + RoPE kernel
  CaseRate rate;
  bool oracle_failed = false;
  std::size_t repetitions = 0;
};
CaseRecord case_record(const BenchCase& c);

// An outside implementation, run through the plugin ABI ("plugin/...") or a Python callable
// ("python/..."): the peers table's rows.
bool is_peer(const std::string& impl);

}  // namespace ropecheck
