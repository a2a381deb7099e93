// Median rates and the baseline ratios for the report (report_bench.h).
#include "reports/bench_tables.h"
#include "core/subject_ids.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace ropecheck {
namespace {

std::optional<double> median_of(const BenchCase& c, const char* counter, double scale) {
  const auto it = c.counters.find(counter);
  if (it == c.counters.end() || it->second.empty()) return std::nullopt;
  return median(it->second) / scale;
}

}  // namespace

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

bool oracle_failed(const BenchCase& c) {
  const auto it = c.counters.find("oracle_failed");
  return it != c.counters.end() && !it->second.empty() && it->second.front() > 0;
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

std::vector<RopeAttentionRow> rope_attention_rows(const BenchData& bench) {
  std::map<std::tuple<long, int, int>, std::map<bench::AttentionRope, double>> rates;
  std::vector<std::tuple<long, int, int>> order;
  for (const auto& name : bench.order) {
    const auto a = parse_attention_case(name);
    if (!a) continue;
    const CaseRate r = case_rate(bench.cases.at(name));
    if (!r.rate || *r.rate <= 0) continue;
    const auto key = std::make_tuple(a->tokens, a->head_dim, a->blas_threads);
    if (!rates.contains(key)) order.push_back(key);
    rates[key][a->rope] = *r.rate;
  }
  std::vector<RopeAttentionRow> rows;
  for (const auto& key : order) {
    const auto& forms = rates.at(key);
    if (forms.size() < 2 || !forms.contains(bench::AttentionRope::none)) continue;
    RopeAttentionRow row;
    std::tie(row.tokens, row.head_dim, row.threads) = key;
    row.alone_rate = forms.at(bench::AttentionRope::none);
    const auto ratio = [&](bench::AttentionRope form) -> std::optional<double> {
      const auto it = forms.find(form);
      if (it == forms.end()) return std::nullopt;
      return *row.alone_rate / it->second;
    };
    row.separate_ratio = ratio(bench::AttentionRope::separate);
    row.fused_ratio = ratio(bench::AttentionRope::fused);
    rows.push_back(row);
  }
  return rows;
}

std::vector<PeerRow> peer_rows(const BenchData& bench) {
  std::vector<PeerRow> rows;
  for (const auto& name : bench.order) {
    const auto parsed = parse_rope_case(name);
    if (!parsed || !is_outside_id(parsed->impl)) continue;
    PeerRow row{parsed->impl, parsed->shape, parsed->layout, parsed->threads,
                case_rate(bench.cases.at(name)), "", std::nullopt, std::nullopt, std::nullopt,
                oracle_failed(bench.cases.at(name)),
                median_of(bench.cases.at(name), "boundary_bytes_per_second", 1e9)};
    std::optional<double> best_fraction;
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
        best_fraction = r.limit_fraction;
      }
    }
    if (row.best_kernel_rate && row.peer_rate.unit == "GB/s" && row.peer_rate.rate && *row.peer_rate.rate > 0) {
      row.ratio = *row.best_kernel_rate / *row.peer_rate.rate;
    }
    if (best_fraction && row.peer_rate.limit_fraction && *row.peer_rate.limit_fraction > 0) {
      row.fraction_ratio = *best_fraction / *row.peer_rate.limit_fraction;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ThreadSweepRow> thread_sweep_rows(const BenchData& bench) {
  std::vector<ThreadSweepRow> rows;
  std::map<std::string, std::size_t> index;  // subject -> row
  for (const auto& name : bench.order) {
    std::string subject;
    int threads = 0;
    if (const auto rope = parse_rope_case(name); rope && !rope->in_worker) {
      subject = fmt::format("{} {}, {}", rope->impl, rope->shape, rope->layout);
      threads = rope->threads;
    } else if (const auto a = parse_attention_case(name)) {
      subject = fmt::format("{} causal {} heads, {} tokens, head_dim {}", bench::form_id(a->rope),
                            a->heads, a->tokens, a->head_dim);
      threads = a->blas_threads;
    } else {
      continue;
    }
    const CaseRate r = case_rate(bench.cases.at(name));
    if (!r.rate) continue;
    const auto [it, added] = index.try_emplace(subject, rows.size());
    if (added) rows.push_back({subject, {}});
    rows[it->second].by_threads[threads] = r;
  }
  std::erase_if(rows, [](const ThreadSweepRow& row) { return row.by_threads.size() < 2; });
  return rows;
}

}  // namespace ropecheck
