// Typed case records of bench.json (case_records.h).
#include "reports/case_records.h"

#include <utility>

#include "core/subject_ids.h"

#include "reports/stats.h"

namespace ropecheck {

std::optional<double> counter_median(const BenchCase& c, const char* name, double scale) {
  const auto it = c.counters.find(name);
  if (it == c.counters.end() || it->second.empty()) return std::nullopt;
  return median(it->second) / scale;
}

CaseRate case_rate(const BenchCase& c) {
  CaseRate r;
  // RoPE and table cases count bytes (and flops besides); attention counts flops only. A RoPE
  // kernel is memory-bound, so bytes are its measure, and the probe's rate is in the same unit.
  if (c.counters.contains("bytes_per_second")) {
    r.unit = "GB/s";
    r.rate = counter_median(c, "bytes_per_second", 1e9);
  } else if (c.counters.contains("flops")) {
    r.unit = "GFLOP/s";
    r.rate = counter_median(c, "flops", 1e9);
  }
  if (!r.unit.empty()) r.probe_rate = counter_median(c, "probe_rate", 1e9);
  if (!c.limit_fraction.empty()) r.limit_fraction = median(c.limit_fraction);
  return r;
}

bool oracle_failed(const BenchCase& c) {
  const auto it = c.counters.find("oracle_failed");
  return it != c.counters.end() && !it->second.empty() && it->second.front() > 0;
}

CaseRecord case_record(const BenchCase& c) {
  CaseRecord r;
  r.name = c.name;
  if (!c.is_probe()) {
    r.rope = bench::parse_rope_case(c.name);
    if (r.rope && r.rope->backward) r.backward = std::exchange(r.rope, std::nullopt);
    if (!r.rope && !r.backward) r.attention = bench::parse_attention_case(c.name);
    if (!r.rope && !r.backward && !r.attention) r.table = bench::parse_table_case(c.name);
    if (!r.rope && !r.backward && !r.attention && !r.table) r.conversion = bench::parse_conversion_case(c.name);
    if (!r.rope && !r.backward && !r.attention && !r.table && !r.conversion) {
      r.rotation = bench::parse_rotation_case(c.name);
    }
    if (!r.rope && !r.backward && !r.attention && !r.table && !r.conversion && !r.rotation) {
      r.fused_cache = bench::parse_fused_cache_case(c.name);
    }
    if (!r.rope && !r.backward && !r.attention && !r.table && !r.conversion && !r.rotation && !r.fused_cache) {
      r.qk_norm_rope = bench::parse_qk_norm_rope_case(c.name);
    }
  }
  r.rate = case_rate(c);
  r.oracle_failed = oracle_failed(c);
  r.repetitions = c.repetitions();
  return r;
}

bool is_peer(const std::string& impl) { return is_outside_id(impl); }

}  // namespace ropecheck
