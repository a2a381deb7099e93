// RoPE benchmark cases: every given implementation on every shape of shapes.h (both layouts;
// the slow scalar references on the shapes marked for them), and its backward pass on the
// prefill shapes where it has one, each checked against the oracle before it is timed, each with
// its same-run in-place probe (same_run_limit.h).
// Napkin math: in-place RoPE reads and writes q and k once: 2 * element bytes * tokens *
// (q_heads + k_heads) * head_dim (llama7b prefill 4096 fp32: 268 MB a pass; gpt2 512: 4.2 MB;
// decode: 64 KiB; bf16 and fp16 half of each). cos/sin are formed per token, not read: 0 bytes.
// The probe: x[i] = s * x[i] over the same q and k bytes, walked as RoPE walks them.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "bench/aligned_buffer.h"
#include "bench/left_out.h"
#include "bench/ratio_table.h"
#include "impls/rope_impl.h"
#include "bench/format/shapes.h"

namespace ropecheck::bench {

// One shape's q, k and positions, shared by every implementation so that all of them stream the
// very same memory. Allocated on first use: a filtered run allocates what it runs.
struct Workload {
  explicit Workload(const RopeShape& s) : shape(s) {}
  const RopeShape shape;
  std::once_flag allocated_positions, allocated, allocated_bf16, allocated_fp16;
  // Page-aligned (aligned_buffer.h): placed alike in every process.
  AlignedVector<float> q, k;
  AlignedVector<std::uint16_t> q16, k16;  // the same values in bf16, for bf16-storage kernels
  AlignedVector<Fp16> q_half, k_half;     // and in fp16, for fp16-storage kernels
  std::vector<std::int64_t> positions;

  void allocate_positions();
  void allocate();       // q, k and positions
  void allocate_bf16();  // q16, k16 and positions
  void allocate_fp16();  // q_half, k_half and positions
};

struct RopeCase {
  RopeCase(const RopeImpl* i, Workload* w, Layout layout, Pass pass);
  const RopeImpl* impl;
  Workload* workload;
  RopeSpec spec;
  std::once_flag checked;  // Google Benchmark calls a case many times: check it once
  std::string error, label;
  // Timed although it failed its check (--time-failing): marked oracle_failed = 1 in bench.json.
  bool time_failing = false;
};

struct RopeCases {
  std::deque<Workload> workloads;  // deques: stable addresses for the whole run
  std::deque<RopeCase> cases;
  bool time_failing = false;  // each case's time_failing
};

// Registers the cases of `impls` (unavailable ones are added to `left_out`) at the given
// benchmark thread counts; returns the ratio-table rows (the issue-3 targets of kernel/avx512).
std::vector<Comparison> register_rope_cases(RopeCases& owner, std::span<const RopeImpl* const> impls,
                                            std::span<const int> threads, LeftOut& left_out);

}  // namespace ropecheck::bench
