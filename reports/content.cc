// build_report() (report_content.h): the sections of the report from the inputs. Numbers are
// formatted here once, so that Markdown and HTML show the same digits.
#include "reports/content.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "bench/format/shapes.h"
#include "core/subject_ids.h"
#include "reports/bench_tables.h"
#include "reports/counted_section.h"
#include "reports/plots.h"
#include "reports/verdict.h"
#include "reports/verdict_section.h"

namespace ropecheck {
namespace {

using Row = std::vector<TableCell>;

void heading(ReportDoc& doc, int level, std::string text) { doc.blocks.emplace_back(Heading{level, std::move(text)}); }
void paragraph(ReportDoc& doc, std::string text) { doc.blocks.emplace_back(Paragraph{std::move(text)}); }

void figure(ReportDoc& doc, const std::map<std::string, Figure>& figures, const char* id,
            const std::string& when_absent) {
  if (const auto it = figures.find(id); it != figures.end()) {
    doc.blocks.emplace_back(it->second);
  } else {
    paragraph(doc, when_absent);
  }
}

std::string context(const BenchData& bench, const std::string& key) {
  const auto it = bench.context.find(key);
  return it == bench.context.end() ? "" : it->second;
}

// ---- machine and build (the last section) ---------------------------------------------------

void machine_section(ReportDoc& doc, const ReportInputs& in) {
  heading(doc, 2, "Machine and build");
  std::vector<std::string> header = {"fact"};
  if (in.verify) header.push_back("verify.json");
  if (in.bench) header.push_back("bench.json");
  Table t{header, {}, {}};
  // A fact from each file side by side: a verify and a bench from different builds or machines
  // show up as two different values in one row.
  const auto row = [&](const std::string& fact, const std::string& from_verify, const std::string& bench_key) {
    Row r = {{fact, ""}};
    if (in.verify) r.push_back({from_verify.empty() ? "-" : from_verify, ""});
    if (in.bench) {
      const std::string v = bench_key.empty() ? "" : context(*in.bench, bench_key);
      r.push_back({v.empty() ? "-" : v, ""});
    }
    const bool any = std::any_of(r.begin() + 1, r.end(), [](const TableCell& c) { return c.text != "-"; });
    if (any) t.rows.push_back(std::move(r));
  };
  std::string flags, cpus;
  if (in.verify) {
    for (const auto& f : in.verify->cpu_flags) flags += (flags.empty() ? "" : " ") + f;
    if (in.verify->logical_cpus > 0) cpus = std::to_string(in.verify->logical_cpus);
  }
  const auto& v = in.verify;
  row("CPU", v ? v->cpu_model : "", "ropecheck_cpu_model");
  row("emulated on (timings are the emulator's)", v ? v->emulated_on : "", "ropecheck_emulated_on");
  row("SVE vector length (bits)", v && v->sve_vector_bits > 0 ? std::to_string(v->sve_vector_bits) : "",
      "ropecheck_sve_vector_bits");
  row("logical CPUs", cpus, "num_cpus");
  row("MHz per CPU", "", "mhz_per_cpu");
  row("ISA flags present", flags, "ropecheck_cpu_flags");
  row("kernel levels this CPU runs", "", "ropecheck_isa_levels");
  row("dispatched level", v ? v->dispatched_isa : "", "ropecheck_dispatched_isa");
  row("OpenBLAS core", "", "ropecheck_openblas_core");
  row("OpenBLAS core it detected (replaced: no vectors of the level)", "", "ropecheck_openblas_core_detected");
  row("OpenBLAS threads", "", "ropecheck_openblas_threads");
  row("OpenBLAS build", "", "ropecheck_openblas_config");
  row("compiler", v ? v->compiler : "", "ropecheck_compiler");
  row("compiler flags", "", "ropecheck_cxx_flags");
  row("build type", v ? v->build_type : "", "ropecheck_build_type");
  row("ASan+UBSan", v ? (v->sanitized ? "true" : "false") : "", "ropecheck_sanitized");
  row("ropecheck version", v ? v->version : "", "ropecheck_version");
  row("git commit", v ? v->git_commit : "", "ropecheck_git_commit");
  row("date of the run", v ? v->timestamp : "", "date");
  row("host", "", "host_name");
  doc.blocks.emplace_back(std::move(t));
  if ((v && v->sanitized) || (in.bench && context(*in.bench, "ropecheck_sanitized") == "true")) {
    paragraph(doc, "Built with ASan+UBSan: timings are not representative.");
  }
}

// ---- verification ---------------------------------------------------------------------------

std::string status_css(const std::string& status) {
  if (status == "PASSED") return "pass";
  if (status == "FAILED") return "fail";
  return "skip";
}

TableCell result_cell(const VerifyResultRow& r) {
  std::string text = r.status;
  if (r.status != "SKIPPED") text += " " + (r.worst_ratio ? format_ratio(*r.worst_ratio) : std::string("-"));
  return {text, status_css(r.status)};
}

// Properties come in families by subject kind; a table per family keeps each one narrow.
std::string family_of(const std::string& property) {
  if (property.rfind("sinusoidal_", 0) == 0) return "Sinusoidal tables";
  if (property.rfind("attention_", 0) == 0 || property.rfind("mha_", 0) == 0) return "Attention";
  return "RoPE";
}

void results_tables(ReportDoc& doc, const VerifyData& v) {
  // family -> properties (file order), subjects (file order), and (subject, property) -> result
  std::vector<std::string> families;
  std::map<std::string, std::vector<std::string>> properties, subjects;
  std::map<std::pair<std::string, std::string>, const VerifyResultRow*> cell;
  const auto add_unique = [](std::vector<std::string>& list, const std::string& item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
  };
  for (const auto& r : v.results) {
    if (r.mutant) continue;
    const std::string family = family_of(r.property);
    add_unique(families, family);
    add_unique(properties[family], r.property);
    add_unique(subjects[family], r.subject);
    cell[{r.subject, r.property}] = &r;
  }
  for (const auto& family : families) {
    heading(doc, 3, family);
    Table t;
    t.header = {"implementation"};
    t.numeric = {false};
    for (const auto& p : properties[family]) {
      t.header.push_back(p);
      t.numeric.push_back(true);
    }
    for (const auto& s : subjects[family]) {
      Row row = {{s, ""}};
      for (const auto& p : properties[family]) {
        const auto it = cell.find({s, p});
        row.push_back(it == cell.end() ? TableCell{"", ""} : result_cell(*it->second));
      }
      t.rows.push_back(std::move(row));
    }
    doc.blocks.emplace_back(std::move(t));
  }
}

void kill_matrix(ReportDoc& doc, const VerifyData& v) {
  heading(doc, 3, "Mutant kill matrix");
  if (!v.has_kill_matrix) {
    paragraph(doc, "verify.json holds no kill matrix: run `ropecheck verify --mutants` to include one.");
    return;
  }
  // Columns: the properties that caught at least one mutant (the others would be empty columns).
  std::vector<std::string> columns, idle;
  for (const auto& p : v.kill_properties) {
    const bool caught = std::any_of(v.kill_rows.begin(), v.kill_rows.end(), [&](const KillRow& r) {
      const auto it = r.by_property.find(p);
      return it != r.by_property.end() && it->second == "FAILED";
    });
    (caught ? columns : idle).push_back(p);
  }
  std::size_t killed = 0;
  for (const auto& r : v.kill_rows) killed += r.verdict == "KILLED";
  paragraph(doc, fmt::format(
                     "{} of {} mutants killed. A cell reads `caught` where the property FAILED on the "
                     "mutant (as some property must), `passed` where it did not notice, and is empty "
                     "where the property does not apply.",
                     killed, v.kill_rows.size()));
  Table t;
  t.header = {"mutant", "verdict", "caught by"};
  t.numeric = {false, false, true};
  for (const auto& p : columns) {
    t.header.push_back(p);
    t.numeric.push_back(false);
  }
  for (const auto& r : v.kill_rows) {
    Row row = {{r.mutant, ""},
               {r.verdict, r.verdict == "KILLED" ? "pass" : "survived"},
               {std::to_string(r.killed_by.size()), ""}};
    for (const auto& p : columns) {
      const auto it = r.by_property.find(p);
      if (it == r.by_property.end()) {
        row.push_back({"", ""});
      } else if (it->second == "FAILED") {
        row.push_back({"caught", "killed"});
      } else {
        row.push_back({it->second == "PASSED" ? "passed" : "skipped", "skip"});
      }
    }
    t.rows.push_back(std::move(row));
  }
  doc.blocks.emplace_back(std::move(t));
  if (!idle.empty()) {
    std::string list;
    for (const auto& p : idle) list += (list.empty() ? "`" : ", `") + p + "`";
    paragraph(doc, "Properties that caught no mutant (left out of the matrix): " + list + ".");
  }
}

// Every property a peer (plugin/... or python/...) fails, with its shrunk case and its bound: a finding
// about outside code, not a failure of ropecheck's own; docs/findings.md writes each one up.
void peer_findings(ReportDoc& doc, const VerifyData& v) {
  Table t;
  t.header = {"peer", "property", "what failed", "shrunk case", "worst / bound", "replay"};
  t.numeric = {false, false, false, false, true, false};
  for (const auto& r : v.results) {
    if (r.status != "FAILED" || r.mutant || !is_outside_id(r.subject)) continue;
    std::string shrunk = r.counterexample;
    std::replace(shrunk.begin(), shrunk.end(), '\n', ' ');
    const auto number = [](const std::optional<double>& x) { return x ? fmt::format("{:.3g}", *x) : std::string("inf"); };
    t.rows.push_back({{r.subject, ""}, {r.property, "fail"}, {r.message, ""}, {shrunk, ""},
                      {fmt::format("{} / {} {}", number(r.worst_error), number(r.bound), r.units), ""},
                      {r.repro_command.empty() ? "-" : "`" + r.repro_command + "`", ""}});
  }
  if (t.rows.empty()) return;
  heading(doc, 3, "Findings in the peers");
  paragraph(doc, "Properties an outside implementation fails: findings about its code (what it computes where "
                 "its users would expect otherwise), not failures of this run. The shrunk case is RapidCheck's "
                 "smallest failing input; docs/findings.md writes each finding up: what, where, how large, "
                 "and whether it matters at real context lengths.");
  doc.blocks.emplace_back(std::move(t));
}

void verification_section(ReportDoc& doc, const ReportInputs& in) {
  heading(doc, 2, "Verification");
  if (!in.verify) {
    paragraph(doc, fmt::format("No verify.json in {}: `ropecheck verify --mutants --out DIR` writes one.",
                               in.in_dir.string()));
    return;
  }
  const auto& v = *in.verify;
  std::size_t passed = 0, failed = 0, skipped = 0, unexpected = 0, mistrusted = 0;
  for (const auto& r : v.results) {
    if (r.status == "PASSED") ++passed;
    if (r.status == "FAILED") ++failed, unexpected += !r.mutant;
    if (r.status == "SKIPPED") ++skipped;
    if (r.status == "MISTRUSTED") ++mistrusted;
  }
  const std::string mistrusted_text =
      mistrusted > 0 ? fmt::format(", {} MISTRUSTED (passed on cases that could not show a bug)", mistrusted) : "";
  paragraph(doc, fmt::format(
                     "{} results: {} PASSED, {} FAILED ({} of them on real implementations), {} SKIPPED{}. "
                     "Each cell is the status and the worst observed error as a fraction of its derived "
                     "bound (`worst/bound`; at most 1 passes, 0 is exact).",
                     v.results.size(), passed, failed, unexpected, skipped, mistrusted_text));
  results_tables(doc, v);
  peer_findings(doc, v);
  kill_matrix(doc, v);
}

// ---- performance ---------------------------------------------------------------------------

void bench_table(ReportDoc& doc, const BenchData& bench) {
  heading(doc, 3, "Benchmark cases");
  paragraph(doc, "Medians over the repetitions; GB = 1e9 bytes (q and k read and written), GFLOP = 1e9 "
                 "flop. The probe is the same-run limit measured right after each repetition: an "
                 "in-place streaming pass over the same bytes (RoPE, tables) or sgemm T x T x d "
                 "(attention); limit_fraction is the case's throughput over the probe's.");
  Table t;
  t.header = {"case", "median rate", "probe rate", "unit", "limit_fraction (median)", "repetitions"};
  t.numeric = {false, true, true, false, true, true};
  for (const CaseRecord& c : bench.records) {
    const std::string& name = c.name;
    const CaseRate& r = c.rate;
    t.rows.push_back({{c.oracle_failed ? name + " (oracle FAILED, timed with --time-failing)" : name, ""},
                      {r.rate ? format_rate(*r.rate) : "-", ""},
                      {r.probe_rate ? format_rate(*r.probe_rate) : "-", ""},
                      {r.unit.empty() ? "-" : r.unit, ""},
                      {r.limit_fraction ? format_fraction(*r.limit_fraction) : "-", ""},
                      {std::to_string(c.repetitions), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// Outside implementations (plugins: the PyTorch peers of peers/torch, or any other; Python
// callables) beside ropecheck's fastest kernel on the same shape, layout and thread count, from
// the same run.
void peers_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = peer_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "Peers");
  paragraph(doc, "Implementations from outside ropecheck, run through the plugin ABI or as Python callables "
                 "in the same run as its own kernels (`--plugin`; `--python`: the python/... rows, timed in "
                 "their interpreter around the call, their probe run by ropecheck over the same shared "
                 "bytes; the PyTorch peers are RoPE as HF transformers and Meta's "
                 "LLaMA compute it with torch ops, one torch thread; plugin/ggml is llama.cpp's "
                 "ggml_rope_ext on ggml's CPU backend with its context and graph built per call, as a "
                 "caller of the API pays, plugin/ggml_compute the same graph reused: graph_compute "
                 "alone). A peer is timed in its worker process on q and k already in its shared "
                 "memory, with the same-run probe run there too, as the built-ins are timed in their "
                 "thread; \"threads:N\" is the thread count of its call, and its probe runs on as many "
                 "threads, each over its share of the tokens, as a built-in's does. \"through the boundary\": the same call from ropecheck's side, "
                 "q and k copied into shared memory and back, one request and reply. ratio = the fastest "
                 "ropecheck fp32 kernel's rate / the peer's on the same shape, layout and threads (> 1: "
                 "ropecheck is faster); by limit_fraction: the same with each rate divided by its own "
                 "same-run probe, which a machine load that differs between the two cases moves less.");
  Table t;
  t.header = {"shape", "layout", "peer", "peer rate (GB/s)", "peer limit_fraction", "best ropecheck kernel",
              "kernel rate (GB/s)", "ratio kernel / peer", "ratio by limit_fraction",
              "peer through the boundary (GB/s)"};
  t.numeric = {false, false, false, true, true, false, true, true, true, true};
  for (const auto& r : rows) {
    t.rows.push_back({{r.shape, ""},
                      {r.layout, ""},
                      {fmt::format("{}/threads:{}{}", r.peer, r.threads, r.oracle_failed ? " (oracle FAILED)" : ""), ""},
                      {r.peer_rate.rate ? format_rate(*r.peer_rate.rate) : "-", ""},
                      {r.peer_rate.limit_fraction ? format_fraction(*r.peer_rate.limit_fraction) : "-", ""},
                      {r.best_kernel.empty() ? "-" : r.best_kernel, ""},
                      {r.best_kernel_rate ? format_rate(*r.best_kernel_rate) : "-", ""},
                      {r.ratio ? fmt::format("{:.1f}", *r.ratio) : "-", ""},
                      {r.fraction_ratio ? fmt::format("{:.1f}", *r.fraction_ratio) : "-", ""},
                      {r.boundary_rate ? format_rate(*r.boundary_rate) : "-", ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// Attention peers (attention plugins: llama.cpp's flash attention) beside attention_blas and
// attention_fused on the same problems and threads, from the same run.
void attention_peers_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = attention_peer_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "Attention peers");
  paragraph(doc, "Attention from outside ropecheck, through the attention plugin ABI (`--plugin`, "
                 "attention_plugin.h), timed in this process as attention_blas is, on the same causal problems "
                 "(8 q heads; kv: the kv heads of a GQA problem), each against its own same-run sgemm probe: "
                 "plugin/ggml_flash_attn is llama.cpp's ggml_flash_attn_ext on ggml's CPU backend with K and V "
                 "in its default F16 cache (the F32 to F16 copies of k and v included, as a prefill pays them), "
                 "plugin/ggml_flash_attn_f32 the same with F32 K and V; threads: ggml's own (n_threads), "
                 "attention_blas's team of as many. Every case counts the causal half's flops; fraction = of the "
                 "same-run sgemm probe. ratio = attention_blas's fraction over the peer's at one thread, its GFLOP/s "
                 "over the peer's at more (a peer's pool can still be running beside its probe, as ggml's "
                 "busy-waiting threads are, and slow it); < 1: the peer is faster. attention_fused (RoPE fused "
                 "into attention_blas) does more work: RoPE on q and k.");
  Table t;
  t.header = {"tokens", "kv", "threads", "peer", "peer (GFLOP/s)", "peer fraction", "attention_blas (GFLOP/s)",
              "attention_blas fraction", "attention_fused fraction", "ratio attention_blas / peer"};
  t.numeric = {true, true, true, false, true, true, true, true, true, true};
  const auto fraction = [](const std::optional<CaseRate>& r) {
    return r && r->limit_fraction ? format_fraction(*r->limit_fraction) : std::string("-");
  };
  for (const auto& r : rows) {
    t.rows.push_back({{std::to_string(r.tokens), ""},
                      {std::to_string(r.kv_heads), ""},
                      {std::to_string(r.threads), ""},
                      {fmt::format("{}{}", r.peer, r.oracle_failed ? " (check FAILED)" : ""), ""},
                      {r.peer_rate.rate ? format_rate(*r.peer_rate.rate) : "-", ""},
                      {fraction(r.peer_rate), ""},
                      {r.blas && r.blas->rate ? format_rate(*r.blas->rate) : "-", ""},
                      {fraction(r.blas), ""},
                      {fraction(r.fused), ""},
                      {r.ratio ? fmt::format("{:.2f}", *r.ratio) : "-", ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// The fast kernel's kept cos/sin rows (impls/kernels/table_rows.h) on the decode cases: what a
// position costs in memory, and a call at a position not formed yet against one at a kept one.
void kept_rows_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = kept_rows_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "The fast kernel's kept cos/sin rows (decode)");
  paragraph(doc, "The fast kernel forms each position's cos/sin row once, 32 positions at a time, and keeps "
                 "it per thread (up to 64 MiB) for every later call at that position: the other layers "
                 "of a decode step, the next requests. A decode case times calls at a kept position; a "
                 "call at a position whose block is not formed yet (the first layer's, once every 32 "
                 "positions) forms its 32 rows first. Memory per position, and for a 4096- and a "
                 "131072-token context.");
  Table t;
  t.header = {"case", "bytes a position", "4096 positions (MiB)", "131072 positions (MiB)",
              "call at a kept position (us)", "call forming its block (us)"};
  t.numeric = {false, true, true, true, true, true};
  for (const auto& r : rows) {
    t.rows.push_back({{r.name, ""},
                      {fmt::format("{:.0f}", r.row_bytes), ""},
                      {fmt::format("{:.2f}", r.row_bytes * 4096 / (1 << 20)), ""},
                      {fmt::format("{:.0f}", r.row_bytes * 131072 / (1 << 20)), ""},
                      {fmt::format("{:.3f}", r.kept_call_seconds * 1e6), ""},
                      {fmt::format("{:.3f}", r.fresh_block_seconds * 1e6), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// Each 16-bit kernel level beside its ceiling: the level's own conversions alone over the same
// bytes (bench/conversion_cases.h), from the same run.
void ceilings_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = ceiling_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "16-bit kernels against their conversions");
  paragraph(doc, "Every element of q and k is widened to fp32 and narrowed back in any RoPE on bf16 or fp16 "
                 "storage. The conversions alone, by the kernel level's own load and store code and nothing "
                 "between, over the same bytes in the same walk, are the most any kernel of that level can "
                 "reach: their fraction of the same-run probe is the level's ceiling on this CPU, and a "
                 "target above it asks for faster conversion instructions, not a better rotation. Each "
                 "kernel case's fraction of the probe, and that over the conversions' fraction (its share "
                 "of the ceiling, each side against its own probe), medians of the same run.");
  Table t;
  t.header = {"kernel", "shape", "threads", "conversions alone (of the probe)", "interleaved (of the probe)",
              "interleaved / conversions", "half_split (of the probe)", "half_split / conversions"};
  t.numeric = {false, false, true, true, true, true, true, true};
  const auto fraction = [](const std::optional<CaseRate>& r) {
    return r && r->limit_fraction ? format_fraction(*r->limit_fraction) : "-";
  };
  const auto share = [](const std::optional<double>& x) { return x ? fmt::format("{:.2f}", *x) : "-"; };
  for (const auto& r : rows) {
    t.rows.push_back({{r.kernel, ""},
                      {r.shape, ""},
                      {std::to_string(r.threads), ""},
                      {fraction(r.ceiling), ""},
                      {fraction(r.interleaved), ""},
                      {share(r.interleaved_share), ""},
                      {fraction(r.half_split), ""},
                      {share(r.half_split_share), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// Each SIMD kernel level beside its rotation alone (bench/rotation_cases.h), from the same run.
void rotation_ceilings_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = rotation_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "Kernels against their rotation alone");
  paragraph(doc, "Each SIMD kernel level's rotation with one cos and sin held in registers, by the level's own "
                 "load, store and rotation instructions and nothing else (no table, no positions, no heads), "
                 "over the same bytes in the same walk: the most any kernel of that level can reach on this "
                 "CPU, since a kernel also loads or forms its cos/sin and walks its heads. A target above it "
                 "asks for other instructions or another core, not a better kernel. Each kernel case's "
                 "fraction of the same-run probe, and that over the rotation's (its share of the ceiling, "
                 "each side against its own probe), medians of the same run.");
  Table t;
  t.header = {"kernel", "shape", "layout", "threads", "rotation alone (of the probe)", "kernel (of the probe)",
              "kernel / rotation alone"};
  t.numeric = {false, false, false, true, true, true, true};
  for (const auto& r : rows) {
    const auto& k = r.kernel_rate;
    t.rows.push_back({{r.kernel, ""},
                      {r.shape, ""},
                      {r.layout, ""},
                      {std::to_string(r.threads), ""},
                      {r.ceiling.limit_fraction ? format_fraction(*r.ceiling.limit_fraction) : "-", ""},
                      {k && k->limit_fraction ? format_fraction(*k->limit_fraction) : "-", ""},
                      {r.share ? fmt::format("{:.2f}", *r.share) : "-", ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// A table cell of the targets' tables: a number with two decimals, "-" where not measured; and
// a target's verdict, "-" where it cannot be told.
std::string target_number(const std::optional<double>& x) { return x ? fmt::format("{:.2f}", *x) : "-"; }
std::string target_verdict(bool known, bool met) { return !known ? "-" : met ? "pass" : "fail"; }

// The fused RoPE + KV-cache kernels (bench/fused_cache_cases.h) against issue 56's two targets.
void fused_cache_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = fused_cache_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "Fused RoPE + KV-cache write");
  paragraph(doc, fmt::format(
      "The own fused kernels rotate q in place and write the rotated k and v into the paged cache in "
      "one pass. Each case's fraction of the same-run probe over its own bytes (q read and written, k "
      "and v read, the cache rows written; target {:.2f} out of cache), and its speed-up over the same "
      "level's two passes (the kernel rotating k in place, then the same stores), timed in the same "
      "pauses, beside what the bytes saved allow (two passes also write k back and read it again); "
      "the target is {:.2f} of that. Medians of the run. The fused peers (plugin/, python/: the engines' "
      "torch references) run at one shape beside them, against the same probe over the same bytes, timed "
      "on the wall clock through the plugin's process boundary; the targets are the own kernels'.",
      kFusedLimitGoal, kFusedSpeedupGoal));
  Table t;
  t.header = {"kernel", "shape", "cache", "of the limit", "limit target", "speed-up over two passes",
              "allowed by the bytes", "speed-up / allowed", "speed-up target"};
  t.numeric = {false, false, false, true, false, true, true, true, false};
  for (const auto& r : rows) {
    const bool own = !is_outside_id(r.impl);  // a peer is shown beside the targets, not held to them
    t.rows.push_back({{r.impl, ""},
                      {r.shape, ""},
                      {r.cache, ""},
                      {r.rate.limit_fraction ? format_fraction(*r.rate.limit_fraction) : "-", ""},
                      {target_verdict(own && r.rate.limit_fraction.has_value(), r.limit_met()), ""},
                      {target_number(r.speedup), ""},
                      {target_number(r.allowed), ""},
                      {target_number(r.speedup_fraction), ""},
                      {target_verdict(r.speedup_fraction.has_value(), r.speedup_met()), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// The fused QK-norm + RoPE kernels (bench/qk_norm_rope_cases.h) against issue 52's two targets.
void qk_norm_rope_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = qk_norm_rope_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "QK-norm + RoPE in the engines' call form");
  paragraph(doc, fmt::format(
      "The own fused kernels read each q and k head of a packed qkv buffer once, RMS-normalize it in "
      "fp32, rotate it with its cos/sin cache row and store it once. Each case's fraction of the "
      "same-run probe over its own bytes (q and k rows read and written, the cache rows and the "
      "weights read; target {:.2f} out of cache), and its speed-up over the same level's two passes "
      "(norm_then_rope: every row normalized in place in the storage, then the plain call), timed in "
      "the same pauses (target {:.2f}), beside what the bytes saved allow. Medians of the run. The "
      "call-form peers (plugin/, python/: the engines' own code, torch references and llama.cpp's graph) run "
      "the call they declare on the same bytes against the same probe, timed on the wall clock through the "
      "plugin's process boundary; the targets are the own kernels'.",
      kQkNormRopeLimitGoal, kQkNormRopeSpeedupGoal));
  Table t;
  t.header = {"kernel", "shape", "form", "of the limit", "limit target", "speed-up over two passes",
              "allowed by the bytes", "speed-up target"};
  t.numeric = {false, false, false, true, false, true, true, false};
  for (const auto& r : rows) {
    const bool own = !is_outside_id(r.impl);  // a peer is shown beside the targets, not held to them
    t.rows.push_back({{r.impl, ""},
                      {r.shape, ""},
                      {r.form, ""},
                      {r.rate.limit_fraction ? format_fraction(*r.rate.limit_fraction) : "-", ""},
                      {target_verdict(own && r.rate.limit_fraction.has_value(), r.limit_met()), ""},
                      {target_number(r.speedup), ""},
                      {target_number(r.allowed), ""},
                      {target_verdict(r.speedup.has_value(), r.speedup_met()), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

void multi_axis_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = multi_axis_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "Multi-axis RoPE against 1D on the same tensors");
  paragraph(doc, fmt::format(
      "A vision-language model positions each token on several axes (Qwen2-VL's MRoPE: t, h, w in "
      "sections of the pairs; Qwen3-VL's interleaved MRoPE). Each such case beside the same "
      "implementation on the same tensors at one axis, from the same run: both fractions of the "
      "same-run probe, and the multi-axis one over the 1D one (the goal: at least {:.2f}). The "
      "prompt is text, an image of 32 patches a row, and text again.", bench::kMultiAxisGoal));
  Table t;
  t.header = {"implementation", "shape", "1D twin", "layout", "threads", "multi-axis (of the probe)",
              "1D (of the probe)", "multi-axis / 1D"};
  t.numeric = {false, false, false, false, true, true, true, true};
  const auto fraction = [](const CaseRate& r) { return r.limit_fraction ? format_fraction(*r.limit_fraction) : "-"; };
  for (const auto& r : rows) {
    std::string share = "-", mark;
    if (r.share) {
      share = fmt::format("{:.2f}", *r.share);
      mark = *r.share >= bench::kMultiAxisGoal ? "pass" : "fail";  // against the goal
    }
    t.rows.push_back({{r.impl, ""},
                      {r.shape, ""},
                      {r.twin, ""},
                      {r.layout, ""},
                      {std::to_string(r.threads), ""},
                      {fraction(r.multi_axis), ""},
                      {fraction(r.one_axis), ""},
                      {share, mark}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// The backward pass beside the forward: an own kernel's is the same pass over the same bytes.
void backward_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = backward_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "Backward pass against forward on the same tensors");
  paragraph(doc, fmt::format(
      "RoPE's gradient, dx = a R(m)^T dy, is a rotation too: the same pass over q and k with the "
      "sine's sign flipped. Each backward case beside the same implementation's forward on the same "
      "tensors, from the same run: both fractions of the same-run probe and their difference. The "
      "own kernels' goal: within {:.2f} of the forward's. A peer's backward (PyTorch's autograd, "
      "ggml's rope_back) is its own code path, and shows what it costs.", bench::kBackwardFractionTolerance));
  Table t;
  t.header = {"implementation", "shape", "layout", "threads", "backward (of the probe)",
              "forward (of the probe)", "backward - forward"};
  t.numeric = {false, false, false, true, true, true, true};
  const auto fraction = [](const CaseRate& r) { return r.limit_fraction ? format_fraction(*r.limit_fraction) : "-"; };
  for (const auto& r : rows) {
    std::string difference = "-", mark;
    if (r.difference) {
      difference = fmt::format("{:+.2f}", *r.difference);
      const bool own_kernel = r.impl.starts_with("kernel");
      if (own_kernel) mark = std::abs(*r.difference) <= bench::kBackwardFractionTolerance ? "pass" : "fail";
    }
    t.rows.push_back({{r.impl, ""},
                      {r.shape, ""},
                      {r.layout, ""},
                      {std::to_string(r.threads), ""},
                      {fraction(r.backward), ""},
                      {fraction(r.forward), ""},
                      {difference, mark}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// Attention alone, with RoPE as a separate pass over q and k first, and with RoPE fused into
// attention's blocking (attention_fused), from the same run.
void rope_attention_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = rope_attention_rows(bench);
  if (rows.empty()) return;
  heading(doc, 3, "RoPE with attention: separate pass vs fused");
  paragraph(doc, "Causal attention (8 heads, OpenBLAS sgemm) alone, then with RoPE on q and k: as a separate "
                 "pass of the fast kernel over q and k in place before it, and fused, each block of "
                 "query rows rotated in cache just before its sgemms (k once, into a copy). Each RoPE form's median time over attention "
                 "alone's (1.05 = 5% slower), same run.");
  Table t;
  t.header = {"tokens", "head_dim", "threads", "attention alone (GFLOP/s)", "separate RoPE / alone",
              "fused RoPE / alone"};
  t.numeric = {true, true, true, true, true, true};
  const auto ratio = [](const std::optional<double>& x) { return x ? fmt::format("{:.3f}", *x) : "-"; };
  for (const auto& r : rows) {
    t.rows.push_back({{std::to_string(r.tokens), ""},
                      {std::to_string(r.head_dim), ""},
                      {std::to_string(r.threads), ""},
                      {r.alone_rate ? format_rate(*r.alone_rate) : "-", ""},
                      {ratio(r.separate_ratio), ""},
                      {ratio(r.fused_ratio), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

// Each case measured at several thread counts (`bench --threads`), its rate and its fraction of
// the same-run probe at each count, and how the rate scales from the fewest threads to the most.
void thread_sweep_section(ReportDoc& doc, const BenchData& bench) {
  const auto rows = thread_sweep_rows(bench);
  if (rows.empty()) return;
  std::set<int> counts;
  for (const auto& r : rows) {
    for (const auto& [n, _] : r.by_threads) counts.insert(n);
  }
  heading(doc, 3, "Thread sweep");
  const std::string cpus = context(bench, "num_cpus");
  paragraph(doc, fmt::format(
      "Each case at every thread count of the run{}: its median rate and, in "
      "parentheses, its fraction of the same-run probe at that count (a kernel's probe runs on the "
      "same threads, each over its own share of the tokens; attention's is an sgemm a head, its "
      "rows shared by as many threads as attention's tasks, each on one OpenBLAS thread). "
      "speed-up = the rate at the most threads over the rate at the fewest.",
      cpus.empty() ? "" : fmt::format(" ({} logical CPUs here)", cpus)));
  Table t;
  t.header = {"case", "unit"};
  t.numeric = {false, false};
  for (const int n : counts) {
    t.header.push_back(fmt::format("{} thread{}", n, n == 1 ? "" : "s"));
    t.numeric.push_back(true);
  }
  t.header.push_back("speed-up");
  t.numeric.push_back(true);
  for (const auto& r : rows) {
    std::vector<TableCell> cells = {{r.subject, ""}, {r.by_threads.begin()->second.unit, ""}};
    for (const int n : counts) {
      const auto it = r.by_threads.find(n);
      if (it == r.by_threads.end()) {  // thread_sweep_rows keeps only counts with a rate
        cells.push_back({"-", ""});
        continue;
      }
      const auto& rate = it->second;
      cells.push_back({rate.limit_fraction ? fmt::format("{} ({})", format_rate(*rate.rate),
                                                         format_fraction(*rate.limit_fraction))
                                           : format_rate(*rate.rate),
                       ""});
    }
    const double first = *r.by_threads.begin()->second.rate, last = *r.by_threads.rbegin()->second.rate;
    cells.push_back({first > 0 ? fmt::format("{:.2f}", last / first) : "-", ""});
    t.rows.push_back(std::move(cells));
  }
  doc.blocks.emplace_back(std::move(t));
}

void performance_section(ReportDoc& doc, const ReportInputs& in, const std::map<std::string, Figure>& figures) {
  heading(doc, 2, "Performance");
  if (!in.bench) {
    paragraph(doc, fmt::format("No bench.json in {}: `ropecheck bench --out DIR` writes one.{}", in.in_dir.string(),
                               in.counted ? " Its counts are in the next section." : ""));
    return;
  }
  if (const std::string host = context(*in.bench, "ropecheck_emulated_on"); !host.empty()) {
    paragraph(doc, fmt::format("**EMULATED: these are not this machine's timings.** Every case below was timed under "
                               "user-mode emulation on {} (an aarch64 build under qemu-aarch64): the speeds are the "
                               "emulator's, and the same-run limits, the targets and the ratios to them say nothing "
                               "about an aarch64 CPU. docs/aarch64.md gives the targets on paper.",
                               host));
  }
  const std::string no_cases = "(no matching cases in bench.json)";
  figure(doc, figures, kPlotThroughput, "RoPE throughput vs tokens: " + no_cases);
  figure(doc, figures, kPlotLimitFraction, "Fraction of the limit: " + no_cases);
  figure(doc, figures, kPlotAttention, "Attention GFLOP/s: " + no_cases);
  bench_table(doc, *in.bench);
  thread_sweep_section(doc, *in.bench);
  ceilings_section(doc, *in.bench);
  rotation_ceilings_section(doc, *in.bench);
  fused_cache_section(doc, *in.bench);
  qk_norm_rope_section(doc, *in.bench);
  multi_axis_section(doc, *in.bench);
  backward_section(doc, *in.bench);
  rope_attention_section(doc, *in.bench);
  peers_section(doc, *in.bench);
  attention_peers_section(doc, *in.bench);
  kept_rows_section(doc, *in.bench);
}

// The history page beside the report (the main job with ROPECHECK_HISTORY): a link and what it
// marks, so that a slowdown over the commits is one click from the run that shows it.
void history_section(ReportDoc& doc, const ReportInputs& in) {
  if (in.history.page.empty()) return;
  heading(doc, 2, "Performance over time");
  doc.blocks.emplace_back(Link{"The history of stored runs", in.history.page, in.history.summary});
  if (in.history.steps.empty()) return;
  Table t{{"steps marked on the history page"}, {false}, {}};
  for (const auto& step : in.history.steps) t.rows.push_back({{step, ""}});
  doc.blocks.emplace_back(std::move(t));
}

// Per implementation and angle formation: the error at 2^12 and 2^24, the largest position within
// the accurate (fp64-angle) bound, and the largest shift at which relative-position invariance
// still holds within two accurate rotations' bound.
void accuracy_table(ReportDoc& doc, const AccuracyData& accuracy) {
  paragraph(doc, "Error vs position, in numbers (one token of 4 heads x 128, base 10000; errors in "
                 "eps32*|pair|). "
                 "\"Accurate up to\": the largest position 2^k up to which every element stays within "
                 "the bound of angles formed in double (2 eps32*|pair| for fp32 storage). \"Invariant "
                 "up to\": the largest shift c for which <R_c q, R_(c+3) k> stays within two such "
                 "rotations' bound of the exact <q, R_3 k>.");
  Table t;
  t.header = {"implementation", "angles", "storage", "error at 4095", "error at 2^24",
              "accurate up to", "invariant up to"};
  t.numeric = {false, false, false, true, true, true, true};
  const auto error_at = [](const ErrorCurve& c, int k) {
    for (const auto& p : c.points) {
      if (p.log2_position == k) return fmt::format("{:.3g}", p.worst_error);
    }
    return std::string("-");
  };
  for (const auto& c : accuracy.error_vs_position) {
    std::string invariant = "-";
    for (const auto& s : accuracy.shift_invariance) {
      if (s.implementation == c.implementation && s.angles == c.angles) {
        invariant = fmt::format("{:.0f}", s.largest_shift);
      }
    }
    const std::string accurate =
        c.largest_accurate_position ? fmt::format("{:.0f}", *c.largest_accurate_position) : "-";
    t.rows.push_back({{c.implementation, ""}, {c.angles, ""}, {c.storage, ""},
                      {c.error_at_4095 ? fmt::format("{:.3g}", *c.error_at_4095) : "-", ""},
                      {error_at(c, 24), ""}, {accurate, ""},
                      {invariant, ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

void accuracy_section(ReportDoc& doc, const ReportInputs& in, const std::map<std::string, Figure>& figures) {
  heading(doc, 2, "Accuracy");
  if (!in.accuracy) {
    paragraph(doc, fmt::format("No accuracy.json in {}: the main job `ropecheck` writes one.", in.in_dir.string()));
    return;
  }
  figure(doc, figures, kPlotErrorVsPosition, "Error vs position: accuracy.json has no curves.");
  accuracy_table(doc, *in.accuracy);
  figure(doc, figures, kPlotDecay, "Long-range decay: accuracy.json has no decay curves.");
}

// The timed comparison; a counted baseline's is in the counted section.
void baseline_section(ReportDoc& doc, const ReportInputs& in, const std::map<std::string, Figure>& figures) {
  if (!in.baseline) return;
  heading(doc, 2, "Against the baseline");
  if (!in.bench) {
    paragraph(doc, "No bench.json in the current run to compare with the baseline.");
    return;
  }
  paragraph(doc, fmt::format("Baseline: `{}`. Ratios of the limit_fraction medians, current / baseline, with "
                             "95% percentile-bootstrap intervals ({} resamples, fixed seed); a ratio below "
                             "1 is slower relative to the same-run limit.",
                             in.baseline->file.string(), kBootstrapResamples));
  figure(doc, figures, kPlotBaseline, "No case has limit_fraction in both runs.");
  Table t;
  t.header = {"case", "baseline median", "current median", "ratio", "95% CI low", "95% CI high"};
  t.numeric = {false, true, true, true, true, true};
  for (const auto& r : compare_to_baseline(*in.bench, *in.baseline)) {
    const std::string css = r.interval.high < 1 ? "fail" : r.interval.low > 1 ? "pass" : "";
    t.rows.push_back({{r.name, ""},
                      {format_fraction(r.baseline_median), ""},
                      {format_fraction(r.current_median), ""},
                      {fmt::format("{:.3f}", r.interval.ratio), css},
                      {fmt::format("{:.3f}", r.interval.low), ""},
                      {fmt::format("{:.3f}", r.interval.high), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
}

}  // namespace

std::string format_ratio(double worst_ratio) {
  return worst_ratio == 0 ? "0" : fmt::format("{:.3g}", worst_ratio);
}

std::string format_fraction(double limit_fraction) {
  // Three decimals read well from 0.1 up; below, a reference at 0.004 needs its significant digits.
  return std::abs(limit_fraction) >= 0.1 ? fmt::format("{:.3f}", limit_fraction)
                                         : fmt::format("{:.3g}", limit_fraction);
}

std::string format_rate(double rate) {
  const double a = std::abs(rate);
  if (a >= 100) return fmt::format("{:.0f}", rate);
  if (a >= 10) return fmt::format("{:.1f}", rate);
  if (a >= 1) return fmt::format("{:.2f}", rate);
  return fmt::format("{:.3g}", rate);
}

ReportDoc build_report(const ReportInputs& in, const std::map<std::string, Figure>& figures) {
  ReportDoc doc;
  doc.title = "ropecheck report";
  // The verdict first: what a reader opens the report for fits its first screen.
  verdict_section(doc, summarize_verdict(in), in.history);
  std::string sources;
  for (const auto& [present, name] : {std::pair{in.verify.has_value(), "verify.json"},
                                      std::pair{in.bench.has_value(), "bench.json"},
                                      std::pair{in.accuracy.has_value(), "accuracy.json"},
                                      std::pair{in.counted.has_value(), "counted.json"}}) {
    sources += fmt::format("{}`{}` ({})", sources.empty() ? "" : ", ", name, present ? "read" : "absent");
  }
  paragraph(doc, fmt::format("From `{}`: {}. Plots are SVG files rendered by gnuplot under `plots/`, "
                             "each beside its data (`.dat`) and script (`.gp`) for re-rendering.",
                             in.in_dir.string(), sources));
  verification_section(doc, in);
  performance_section(doc, in, figures);
  counted_section(doc, in);
  history_section(doc, in);
  accuracy_section(doc, in, figures);
  baseline_section(doc, in, figures);
  machine_section(doc, in);
  return doc;
}

}  // namespace ropecheck
