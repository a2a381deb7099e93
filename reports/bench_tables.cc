// The report's bench tables from the run's case records (bench_tables.h).
#include "reports/bench_tables.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "bench/format/shapes.h"

namespace ropecheck {
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
  for (const CaseRecord& c : bench.records) {
    // Ours, one kv head a q head (the RoPE forms are timed on those only).
    if (!c.attention || !c.attention->peer.empty() || c.attention->kv() != c.attention->heads || !c.rate.rate ||
        *c.rate.rate <= 0) {
      continue;
    }
    const auto key = std::make_tuple(c.attention->tokens, c.attention->head_dim, c.attention->blas_threads);
    if (!rates.contains(key)) order.push_back(key);
    rates[key][c.attention->rope] = *c.rate.rate;
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

std::vector<AttentionPeerRow> attention_peer_rows(const BenchData& bench) {
  // ropecheck's own cases of each problem and thread count, by form
  using Key = std::tuple<long, long, int, int>;  // tokens, kv heads, head_dim, threads
  std::map<std::pair<Key, bench::AttentionRope>, const CaseRecord*> own;
  const auto key_of = [](const bench::AttentionCaseName& a) { return Key{a.tokens, a.kv(), a.head_dim, a.blas_threads}; };
  for (const CaseRecord& c : bench.records) {
    if (c.attention && c.attention->peer.empty()) own[{key_of(*c.attention), c.attention->rope}] = &c;
  }
  std::vector<AttentionPeerRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.attention || c.attention->peer.empty()) continue;
    const auto& a = *c.attention;
    AttentionPeerRow row{a.peer, a.tokens, a.kv(), a.heads, a.head_dim, a.blas_threads, c.rate, std::nullopt,
                         std::nullopt, std::nullopt, c.oracle_failed};
    if (const auto it = own.find({key_of(a), bench::AttentionRope::none}); it != own.end()) {
      row.blas = it->second->rate;
      if (row.threads > 1) {
        if (row.blas->rate && row.peer_rate.rate && *row.peer_rate.rate > 0) row.ratio = *row.blas->rate / *row.peer_rate.rate;
      } else if (row.blas->limit_fraction && row.peer_rate.limit_fraction && *row.peer_rate.limit_fraction > 0) {
        row.ratio = *row.blas->limit_fraction / *row.peer_rate.limit_fraction;
      }
    }
    if (const auto it = own.find({key_of(a), bench::AttentionRope::fused}); it != own.end()) row.fused = it->second->rate;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<PeerRow> peer_rows(const BenchData& bench) {
  // ropecheck's fastest fp32 kernel ("kernel/...") per shape, layout and thread count
  std::map<std::tuple<std::string, std::string, int>, const CaseRecord*> best;
  for (const CaseRecord& c : bench.records) {
    if (!c.rope || c.rope->impl.rfind("kernel/", 0) != 0 || c.rate.unit != "GB/s" || !c.rate.rate) continue;
    const CaseRecord*& b = best[{c.rope->shape, c.rope->layout, c.rope->threads}];
    if (b == nullptr || *c.rate.rate > *b->rate.rate) b = &c;
  }
  std::vector<PeerRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.rope || !is_peer(c.rope->impl)) continue;
    PeerRow row{c.rope->impl, c.rope->shape, c.rope->layout, c.rope->threads, c.rate, "", std::nullopt,
                std::nullopt, std::nullopt, c.oracle_failed,
                counter_median(bench.cases.at(c.name), "boundary_bytes_per_second", 1e9)};
    if (const auto it = best.find({row.shape, row.layout, row.threads}); it != best.end()) {
      const CaseRecord& k = *it->second;
      row.best_kernel = k.rope->impl;
      row.best_kernel_rate = k.rate.rate;
      if (row.peer_rate.unit == "GB/s" && row.peer_rate.rate && *row.peer_rate.rate > 0) {
        row.ratio = *row.best_kernel_rate / *row.peer_rate.rate;
      }
      if (k.rate.limit_fraction && row.peer_rate.limit_fraction && *row.peer_rate.limit_fraction > 0) {
        row.fraction_ratio = *k.rate.limit_fraction / *row.peer_rate.limit_fraction;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ThreadSweepRow> thread_sweep_rows(const BenchData& bench) {
  std::vector<ThreadSweepRow> rows;
  std::map<std::string, std::size_t> index;  // subject -> row
  for (const CaseRecord& c : bench.records) {
    std::string subject;
    int threads = 0;
    if (c.rope && !c.rope->in_worker) {
      subject = fmt::format("{} {}, {}", c.rope->impl, c.rope->shape, c.rope->layout);
      threads = c.rope->threads;
    } else if (c.conversion) {
      subject = fmt::format("{} {}", c.conversion->conversion, c.conversion->shape);
      threads = c.conversion->threads;
    } else if (c.rotation) {
      subject = fmt::format("{} {}, {}", c.rotation->rotation, c.rotation->shape, c.rotation->layout);
      threads = c.rotation->threads;
    } else if (c.attention) {
      subject = fmt::format("{} causal {} heads{}, {} tokens, head_dim {}", c.attention->impl(), c.attention->heads,
                            c.attention->kv() == c.attention->heads ? "" : fmt::format(" ({} kv)", c.attention->kv()),
                            c.attention->tokens, c.attention->head_dim);
      threads = c.attention->blas_threads;
    } else {
      continue;
    }
    if (!c.rate.rate) continue;
    const auto [it, added] = index.try_emplace(subject, rows.size());
    if (added) rows.push_back({subject, {}});
    rows[it->second].by_threads[threads] = c.rate;
  }
  std::erase_if(rows, [](const ThreadSweepRow& row) { return row.by_threads.size() < 2; });
  return rows;
}

std::vector<KeptRowsRow> kept_rows_rows(const BenchData& bench) {
  std::vector<KeptRowsRow> rows;
  for (const CaseRecord& c : bench.records) {
    const BenchCase& data = bench.cases.at(c.name);
    const auto bytes = counter_median(data, "kept_row_bytes", 1);
    const auto fresh = counter_median(data, "fresh_block_seconds", 1);
    if (!c.rope || !bytes || !fresh || data.real_time_ns.empty()) continue;
    rows.push_back({fmt::format("{} {}, {}", c.rope->impl, c.rope->shape, c.rope->layout), *bytes,
                    median(data.real_time_ns) * 1e-9, *fresh});
  }
  return rows;
}

namespace {

// The forward RoPE cases by (implementation, shape, layout, threads): what a row of a table
// that sets a case beside another looks the other up in. own_process_only: leave out the cases
// timed in a plugin's worker.
using ForwardKey = std::tuple<std::string, std::string, std::string, int>;
std::map<ForwardKey, const CaseRecord*> forward_cases(const BenchData& bench, bool own_process_only) {
  std::map<ForwardKey, const CaseRecord*> cases;
  for (const CaseRecord& c : bench.records) {
    if (c.rope && !(own_process_only && c.rope->in_worker)) {
      cases[{c.rope->impl, c.rope->shape, c.rope->layout, c.rope->threads}] = &c;
    }
  }
  return cases;
}

}  // namespace

std::vector<MultiAxisRow> multi_axis_rows(const BenchData& bench) {
  const auto cases = forward_cases(bench, false);
  std::vector<MultiAxisRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.rope) continue;
    const auto twin = bench::one_axis_twin(c.rope->shape);
    if (twin.empty()) continue;
    const auto it = cases.find({c.rope->impl, std::string(twin), c.rope->layout, c.rope->threads});
    if (it == cases.end()) continue;
    MultiAxisRow row{c.rope->impl, c.rope->shape, std::string(twin), c.rope->layout, c.rope->threads,
                     c.rate, it->second->rate, std::nullopt};
    if (row.multi_axis.limit_fraction && row.one_axis.limit_fraction && *row.one_axis.limit_fraction > 0) {
      row.share = *row.multi_axis.limit_fraction / *row.one_axis.limit_fraction;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<BackwardRow> backward_rows(const BenchData& bench) {
  const auto forward = forward_cases(bench, false);
  std::vector<BackwardRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.backward) continue;
    const auto& b = *c.backward;
    const auto it = forward.find({b.impl, b.shape, b.layout, b.threads});
    if (it == forward.end()) continue;
    BackwardRow row{b.impl, b.shape, b.layout, b.threads, b.in_worker, c.rate, it->second->rate, std::nullopt};
    if (row.backward.limit_fraction && row.forward.limit_fraction) {
      row.difference = *row.backward.limit_fraction - *row.forward.limit_fraction;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<CeilingRow> ceiling_rows(const BenchData& bench) {
  const auto kernels = forward_cases(bench, true);
  std::vector<CeilingRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.conversion) continue;
    CeilingRow row{c.conversion->conversion, bench::kernel_of_conversion(c.conversion->conversion),
                   c.conversion->shape, c.conversion->threads, c.rate, std::nullopt, std::nullopt,
                   std::nullopt, std::nullopt};
    const auto fill = [&](const char* layout, std::optional<CaseRate>& rate, std::optional<double>& share) {
      const auto it = kernels.find({row.kernel, row.shape, layout, row.threads});
      if (it == kernels.end()) return;
      rate = it->second->rate;
      if (rate->limit_fraction && row.ceiling.limit_fraction && *row.ceiling.limit_fraction > 0) {
        share = *rate->limit_fraction / *row.ceiling.limit_fraction;
      }
    };
    fill("interleaved", row.interleaved, row.interleaved_share);
    fill("half_split", row.half_split, row.half_split_share);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<RotationRow> rotation_rows(const BenchData& bench) {
  const auto kernels = forward_cases(bench, true);
  std::vector<RotationRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.rotation) continue;
    RotationRow row{c.rotation->rotation, bench::kernel_of_rotation(c.rotation->rotation), c.rotation->shape,
                    c.rotation->layout, c.rotation->threads, c.rate, std::nullopt, std::nullopt};
    if (const auto it = kernels.find({row.kernel, row.shape, row.layout, row.threads}); it != kernels.end()) {
      row.kernel_rate = it->second->rate;
      if (row.kernel_rate->limit_fraction && row.ceiling.limit_fraction && *row.ceiling.limit_fraction > 0) {
        row.share = *row.kernel_rate->limit_fraction / *row.ceiling.limit_fraction;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<FusedCacheRow> fused_cache_rows(const BenchData& bench) {
  std::vector<FusedCacheRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.fused_cache) continue;
    const BenchCase& raw = bench.cases.at(c.name);
    rows.push_back({c.fused_cache->impl, c.fused_cache->shape, c.fused_cache->layout + " " + c.fused_cache->storage,
                    c.rate, counter_median(raw, "speedup_vs_two_pass", 1), counter_median(raw, "speedup_allowed", 1),
                    counter_median(raw, "speedup_fraction", 1)});
  }
  return rows;
}

std::vector<QkNormRopeRow> qk_norm_rope_rows(const BenchData& bench) {
  std::vector<QkNormRopeRow> rows;
  for (const CaseRecord& c : bench.records) {
    if (!c.qk_norm_rope) continue;
    const BenchCase& raw = bench.cases.at(c.name);
    rows.push_back({c.qk_norm_rope->impl, c.qk_norm_rope->shape, c.qk_norm_rope->angles + " " + c.qk_norm_rope->storage,
                    c.rate, counter_median(raw, "speedup_vs_two_pass", 1), counter_median(raw, "speedup_allowed", 1)});
  }
  return rows;
}

}  // namespace ropecheck
