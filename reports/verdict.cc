// summarize_verdict() (verdict.h): the verdict summary from verify.json and bench.json as read.
#include "reports/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "core/subject_ids.h"
#include "reports/bench_tables.h"

namespace ropecheck {
namespace {

// A message's first line, clipped: a summary names the reason, verify.json keeps all of it.
constexpr std::size_t kReasonChars = 160;

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > kReasonChars) line = line.substr(0, kReasonChars - 3) + "...";
  return line.empty() ? "(no message)" : line;
}

bool failing_status(const std::string& status) { return status == "FAILED" || status == "HANG"; }

void add_unique(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

void summarize_verify(const VerifyData& v, VerdictSummary& s) {
  std::map<std::string, PeerVerdict> peers;
  std::vector<std::string> peer_order;
  std::map<std::string, SkipGroup> skips;
  std::vector<std::string> skip_order;
  for (const auto& r : v.results) {
    if (r.mutant) continue;  // judged by the kill matrix below
    if (r.status == "SKIPPED") {
      const std::string reason = first_line(r.message);
      if (!skips.contains(reason)) skip_order.push_back(reason);
      SkipGroup& g = skips[reason];
      g.reason = reason;
      ++g.results;
      add_unique(g.subjects, r.subject);
    }
    if (is_outside_id(r.subject)) {
      if (!peers.contains(r.subject)) peer_order.push_back(r.subject);
      PeerVerdict& p = peers[r.subject];
      p.peer = r.subject;
      p.passed += r.status == "PASSED";
      p.skipped += r.status == "SKIPPED";
      if (failing_status(r.status)) {
        ++p.failed;
        p.findings.push_back({r.subject, r.property, r.status, first_line(r.message)});
      }
      continue;
    }
    s.passed += r.status == "PASSED";
    s.skipped += r.status == "SKIPPED";
    s.mistrusted += r.status == "MISTRUSTED";
    if (failing_status(r.status)) {
      ++s.failed;
      s.failures.push_back({r.subject, r.property, r.status, first_line(r.message)});
    }
  }
  for (const auto& name : peer_order) s.peers.push_back(std::move(peers[name]));
  for (const auto& reason : skip_order) s.skips.push_back(std::move(skips[reason]));
  std::stable_sort(s.skips.begin(), s.skips.end(),
                   [](const SkipGroup& a, const SkipGroup& b) { return a.results > b.results; });
  s.has_mutants = v.has_kill_matrix;
  for (const auto& row : v.kill_rows) {
    ++s.mutants;
    if (row.verdict == "KILLED") {
      ++s.mutants_killed;
    } else {
      s.survivors.push_back(row.mutant);
    }
  }
  s.sanitized = v.sanitized;
}

std::string rope_label(const bench::RopeCaseName& r) {
  return fmt::format("{} {} {}{}", r.impl, r.shape, r.layout, r.threads == 1 ? "" : fmt::format(" threads:{}", r.threads));
}

// The storage family of a kernel id ("kernel_bf16/avx512" -> "kernel_bf16"); "" for other ids.
std::string kernel_family(const std::string& impl) {
  if (impl.rfind("kernel", 0) != 0) return "";
  return impl.substr(0, impl.find('/'));
}

// Each (family, shape, layout, threads) at its fastest level, then the best and worst of those.
std::optional<KernelHeadline> rope_headline(const BenchData& bench, const std::string& group, bool sixteen_bit) {
  std::map<std::tuple<std::string, std::string, std::string, int>, CaseValue> fastest;
  for (const CaseRecord& c : bench.records) {
    if (!c.rope || !c.rate.limit_fraction || c.oracle_failed) continue;
    const std::string family = kernel_family(c.rope->impl);
    if (family.empty() || (family != "kernel") != sixteen_bit) continue;
    const auto key = std::make_tuple(family, c.rope->shape, c.rope->layout, c.rope->threads);
    const auto it = fastest.find(key);
    if (it == fastest.end() || *c.rate.limit_fraction > it->second.value) {
      fastest[key] = {rope_label(*c.rope), *c.rate.limit_fraction};
    }
  }
  if (fastest.empty()) return std::nullopt;
  KernelHeadline h{group, 0, fastest.begin()->second, fastest.begin()->second};
  for (const auto& [_, c] : fastest) {
    ++h.cases;
    if (c.value > h.best.value) h.best = c;
    if (c.value < h.worst.value) h.worst = c;
  }
  return h;
}

std::optional<KernelHeadline> attention_headline(const BenchData& bench) {
  std::optional<KernelHeadline> h;
  for (const CaseRecord& c : bench.records) {
    if (!c.attention || c.attention->rope != bench::AttentionRope::none || !c.attention->peer.empty() ||
        !c.rate.limit_fraction) {
      continue;
    }
    const CaseValue here{fmt::format("attention_blas {} heads{} tokens:{} head_dim:{}{}", c.attention->heads,
                                     c.attention->kv() == c.attention->heads ? "" : fmt::format(" ({} kv)", c.attention->kv()),
                                     c.attention->tokens, c.attention->head_dim,
                                     c.attention->blas_threads == 1 ? "" : fmt::format(" threads:{}", c.attention->blas_threads)),
                         *c.rate.limit_fraction};
    if (!h) h = KernelHeadline{"attention against sgemm", 0, here, here};
    ++h->cases;
    if (here.value > h->best.value) h->best = here;
    if (here.value < h->worst.value) h->worst = here;
  }
  return h;
}

// The own fused RoPE + KV-cache kernels (bench/fused_cache_cases.h): each (shape, cache) at its
// fastest level (scalar is not a speed level), then the best and worst fraction of the limit.
std::optional<KernelHeadline> fused_cache_headline(const BenchData& bench) {
  std::map<std::pair<std::string, std::string>, CaseValue> fastest;
  for (const FusedCacheRow& row : fused_cache_rows(bench)) {
    if (!row.impl.starts_with("fused_cache/") || row.impl == "fused_cache/scalar" || !row.rate.limit_fraction) continue;
    const auto key = std::make_pair(row.shape, row.cache);
    const CaseValue here{fmt::format("{} {} {}", row.impl, row.shape, row.cache), *row.rate.limit_fraction};
    if (const auto it = fastest.find(key); it == fastest.end() || here.value > it->second.value) fastest[key] = here;
  }
  if (fastest.empty()) return std::nullopt;
  KernelHeadline h{"RoPE + KV-cache write", 0, fastest.begin()->second, fastest.begin()->second};
  for (const auto& [_, c] : fastest) {
    ++h.cases;
    if (c.value > h.best.value) h.best = c;
    if (c.value < h.worst.value) h.worst = c;
  }
  return h;
}

// The own fused QK-norm + RoPE kernels (bench/qk_norm_rope_cases.h): each (shape, form) at its
// fastest level, then the best and worst fraction of the limit.
std::optional<KernelHeadline> qk_norm_rope_headline(const BenchData& bench) {
  std::map<std::pair<std::string, std::string>, CaseValue> fastest;
  for (const QkNormRopeRow& row : qk_norm_rope_rows(bench)) {
    if (!row.impl.starts_with("qk_norm_rope/") || row.impl == "qk_norm_rope/scalar" || !row.rate.limit_fraction) continue;
    const auto key = std::make_pair(row.shape, row.form);
    const CaseValue here{fmt::format("{} {} {}", row.impl, row.shape, row.form), *row.rate.limit_fraction};
    if (const auto it = fastest.find(key); it == fastest.end() || here.value > it->second.value) fastest[key] = here;
  }
  if (fastest.empty()) return std::nullopt;
  KernelHeadline h{"QK-norm + RoPE", 0, fastest.begin()->second, fastest.begin()->second};
  for (const auto& [_, c] : fastest) {
    ++h.cases;
    if (c.value > h.best.value) h.best = c;
    if (c.value < h.worst.value) h.worst = c;
  }
  return h;
}

// One timed problem of a peer (its verdict added to s.peers if verify had none): a failed check
// marks it; a ratio, when the kernels or attention_blas have one on that problem, widens its range.
void add_timed_case(VerdictSummary& s, const std::string& peer, bool oracle_failed, const std::optional<double>& ratio,
                    std::string label) {
  auto it = std::find_if(s.peers.begin(), s.peers.end(), [&](const PeerVerdict& p) { return p.peer == peer; });
  if (it == s.peers.end()) {
    s.peers.push_back(PeerVerdict{peer, 0, 0, 0, {}, 0, std::nullopt, std::nullopt, false});
    it = s.peers.end() - 1;
  }
  it->timed_failing = it->timed_failing || oracle_failed;
  if (!ratio) return;
  const CaseValue here{std::move(label), *ratio};
  ++it->shapes;
  if (!it->lowest_ratio || here.value < it->lowest_ratio->value) it->lowest_ratio = here;
  if (!it->highest_ratio || here.value > it->highest_ratio->value) it->highest_ratio = here;
}

void summarize_bench(const BenchData& bench, VerdictSummary& s) {
  s.bench_cases = bench.records.size();
  if (const auto it = bench.context.find("ropecheck_isa_levels"); it != bench.context.end()) s.isa_levels = it->second;
  if (const auto it = bench.context.find("ropecheck_sanitized"); it != bench.context.end() && it->second == "true") {
    s.sanitized = true;
  }
  if (const auto it = bench.context.find("ropecheck_emulated_on"); it != bench.context.end()) s.emulated_on = it->second;
  for (auto headline : {rope_headline(bench, "RoPE fp32 kernels", false), rope_headline(bench, "RoPE 16-bit kernels", true),
                        fused_cache_headline(bench), qk_norm_rope_headline(bench), attention_headline(bench)}) {
    if (headline) s.kernels.push_back(std::move(*headline));
  }
  const std::vector<PeerRow> rows = peer_rows(bench);
  // A peer timed in one layout (the PyTorch forms) needs no layout in its shapes' labels.
  std::map<std::string, std::set<std::string>> layouts;
  for (const PeerRow& row : rows) layouts[row.peer].insert(row.layout);
  const auto threads = [](int n) { return n == 1 ? std::string() : fmt::format(" threads:{}", n); };
  for (const PeerRow& row : rows) {
    add_timed_case(s, row.peer, row.oracle_failed, row.ratio,
                   fmt::format("{}{}{}", row.shape, layouts[row.peer].size() > 1 ? " " + row.layout : "",
                               threads(row.threads)));
  }
  // Attention peers: attention_blas's rate over theirs, each over its own sgemm probe.
  for (const AttentionPeerRow& row : attention_peer_rows(bench)) {
    add_timed_case(s, row.peer, row.oracle_failed, row.ratio,
                   fmt::format("tokens:{}{}{}", row.tokens,
                               row.kv_heads == row.heads ? "" : fmt::format(" {}kv", row.kv_heads), threads(row.threads)));
  }
}

}  // namespace

VerdictSummary summarize_verdict(const ReportInputs& in) {
  VerdictSummary s;
  s.has_verify = in.verify.has_value();
  s.has_bench = in.bench.has_value();
  if (in.verify) summarize_verify(*in.verify, s);
  if (in.bench) summarize_bench(*in.bench, s);
  return s;
}

}  // namespace ropecheck
