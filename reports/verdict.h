// The verdict summary: what a run found, in the few facts a reader looks for first. Is anything of
// ropecheck's own broken (and why), were the mutants killed, how close the kernels came to the
// same-run limit (best and worst), how the peers compare and what they fail, what was skipped on
// this CPU and why. Computed once from the run's files (reports/data.h); the main job prints it
// (verdict_text.h) and the report opens with it (verdict_section.h), so the two cannot disagree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/data.h"

namespace ropecheck {

// A (subject, property) result that failed (FAILED or HANG), with the first line of its message.
struct FailedCheck {
  std::string subject, property, status, reason;
};

// SKIPPED results that share a reason (its first line), and the subjects they are of.
struct SkipGroup {
  std::string reason;
  int results = 0;
  std::vector<std::string> subjects;  // in file order, each once
};

// A bench case (or a shape) and its number: a fraction of the same-run limit, or a peer's ratio.
struct CaseValue {
  std::string label;  // "kernel/avx2 llama7b_prefill512 half_split", "llama7b_decode_at4095 interleaved"
  double value = 0;
};

// A group of kernels against their limits: every shape (and layout, thread count) at the fastest
// level measured there, the one a caller on this CPU gets; its best and worst case.
struct KernelHeadline {
  std::string group;  // "RoPE fp32 kernels", "RoPE 16-bit kernels", "attention against sgemm"
  int cases = 0;
  CaseValue best, worst;
};

// An outside implementation (plugin/..., python/...): its verify counts and failures (findings
// about its code, not failures of the run), and ropecheck's fastest fp32 kernel's rate over its
// rate on the same shape, layout and threads (reports/bench_tables.h peer_rows); for an attention
// peer, attention_blas over the peer (attention_peer_rows: by fraction of the sgemm probe at one
// thread, by rate at more), the label the problem ("tokens:512 2kv threads:2").
struct PeerVerdict {
  std::string peer;
  int passed = 0, failed = 0, skipped = 0;
  std::vector<FailedCheck> findings;
  int shapes = 0;  // bench rows with a ratio
  std::optional<CaseValue> lowest_ratio, highest_ratio;  // label: the shape and layout
  bool timed_failing = false;  // timed although it failed its check (bench --time-failing)
};

struct VerdictSummary {
  bool has_verify = false, has_bench = false;
  // ropecheck's own implementations (neither mutants nor peers)
  int passed = 0, failed = 0, skipped = 0, mistrusted = 0;
  std::vector<FailedCheck> failures;
  // mutants (a --mutants run only)
  bool has_mutants = false;
  int mutants = 0, mutants_killed = 0;
  std::vector<std::string> survivors;
  std::vector<SkipGroup> skips;  // own and peers', largest first
  std::string isa_levels;        // the kernel levels this CPU runs (bench.json's context); "" unknown
  std::size_t bench_cases = 0;
  std::vector<KernelHeadline> kernels;
  bool sanitized = false;  // an ASan+UBSan build: its timings are not representative
  std::string emulated_on;  // timed under emulation on this host CPU: the emulator's speeds
  std::vector<PeerVerdict> peers;

  // Every own implementation passed and no mutant survived: the run's verdict (peers aside).
  bool passed_all() const { return failures.empty() && survivors.empty(); }
};

VerdictSummary summarize_verdict(const ReportInputs& inputs);

}  // namespace ropecheck
