// Case-name parsing, median rates and the baseline ratios for the report (report_bench.h).
#include "reports/bench_tables.h"

#include <charconv>
#include <sstream>

namespace ropecheck {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

// The integer after `key:` in `part`, e.g. "threads:2" -> 2.
std::optional<long> keyed_int(const std::string& part, const std::string& key) {
  if (part.rfind(key + ":", 0) != 0) return std::nullopt;
  long value = 0;
  const char* begin = part.data() + key.size() + 1;
  const char* end = part.data() + part.size();
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

std::optional<double> median_of(const BenchCase& c, const char* counter, double scale) {
  const auto it = c.counters.find(counter);
  if (it == c.counters.end() || it->second.empty()) return std::nullopt;
  return median(it->second) / scale;
}

}  // namespace

std::optional<RopeCaseName> parse_rope_case(const std::string& name) {
  const auto parts = split(name, '/');
  if (parts.size() != 6 || parts[4] != "real_time") return std::nullopt;
  if (parts[3] != "interleaved" && parts[3] != "half_split") return std::nullopt;
  const auto threads = keyed_int(parts[5], "threads");
  if (!threads) return std::nullopt;
  return RopeCaseName{parts[0] + "/" + parts[1], parts[2], parts[3], static_cast<int>(*threads)};
}

std::optional<AttentionCaseName> parse_attention_case(const std::string& name) {
  const auto parts = split(name, '/');
  if (parts.size() != 6 || parts[0] != "attention_blas" || parts[5] != "real_time") return std::nullopt;
  const auto tokens = keyed_int(parts[2], "tokens");
  const auto head_dim = keyed_int(parts[3], "head_dim");
  const auto threads = keyed_int(parts[4], "blas_threads");
  if (!tokens || !head_dim || !threads) return std::nullopt;
  return AttentionCaseName{*tokens, static_cast<int>(*head_dim), static_cast<int>(*threads)};
}

CaseRate case_rate(const BenchCase& c) {
  CaseRate r;
  // RoPE and table cases count bytes (and flops besides); attention counts flops only. A RoPE
  // kernel is memory-bound, so bytes are its measure, and the probe's rate is in the same unit.
  if (c.counters.contains("bytes_per_second")) {
    r.unit = "GB/s";
    r.rate = median_of(c, "bytes_per_second", 1e9);
  } else if (c.counters.contains("flops")) {
    r.unit = "GFLOP/s";
    r.rate = median_of(c, "flops", 1e9);
  }
  if (!r.unit.empty()) r.probe_rate = median_of(c, "probe_rate", 1e9);
  if (!c.limit_fraction.empty()) r.limit_fraction = median(c.limit_fraction);
  return r;
}

std::vector<BaselineRow> compare_to_baseline(const BenchData& current, const BenchData& baseline) {
  std::vector<BaselineRow> rows;
  for (const auto& name : current.order) {
    const BenchCase& c = current.cases.at(name);
    const auto b = baseline.cases.find(name);
    if (b == baseline.cases.end() || c.limit_fraction.empty() || b->second.limit_fraction.empty()) continue;
    rows.push_back({name, median(c.limit_fraction), median(b->second.limit_fraction),
                    bootstrap_median_ratio(c.limit_fraction, b->second.limit_fraction)});
  }
  return rows;
}

std::vector<PeerRow> peer_rows(const BenchData& bench) {
  std::vector<PeerRow> rows;
  for (const auto& name : bench.order) {
    const auto parsed = parse_rope_case(name);
    if (!parsed || parsed->impl.rfind("plugin/", 0) != 0) continue;
    PeerRow row{parsed->impl, parsed->shape, parsed->layout, parsed->threads,
                case_rate(bench.cases.at(name)), "", std::nullopt, std::nullopt};
    for (const auto& other : bench.order) {
      const auto k = parse_rope_case(other);
      if (!k || k->impl.rfind("kernel/", 0) != 0 || k->shape != row.shape ||
          k->layout != row.layout || k->threads != row.threads) {
        continue;
      }
      const CaseRate r = case_rate(bench.cases.at(other));
      if (r.unit != "GB/s" || !r.rate) continue;
      if (!row.best_kernel_rate || *r.rate > *row.best_kernel_rate) {
        row.best_kernel = k->impl;
        row.best_kernel_rate = r.rate;
      }
    }
    if (row.best_kernel_rate && row.peer_rate.unit == "GB/s" && row.peer_rate.rate && *row.peer_rate.rate > 0) {
      row.ratio = *row.best_kernel_rate / *row.peer_rate.rate;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ropecheck
