// The 16-bit kernels' ceilings: each conversion level of impls/kernels/round_trip_levels.h (a
// kernel's own widening and narrowing, nothing else) over the bf16 or fp16 q and k of a RoPE
// workload, the very buffers the kernels stream, walked as the probe walks them and with the probe
// as its same-run limit. Its limit_fraction is the most any kernel of that level can reach on that
// shape: a target above it asks for faster conversion instructions, not a better rotation.
// Napkin math: the same bytes as the kernel's case (2 bytes an element read and written); no
// cos/sin, no arithmetic.
#pragma once

#include <deque>
#include <span>
#include <vector>

#include "bench/ratio_table.h"
#include "bench/rope_cases.h"
#include "impls/kernels/round_trip_levels.h"

namespace ropecheck::bench {

struct ConversionCase {
  ConversionCase(const kernels::RoundTripLevel* l, Workload* w) : level(l), workload(w) {}
  const kernels::RoundTripLevel* level;
  Workload* workload;
};

// The shapes the ceilings run on: in cache (GPT-2 small, 512 tokens), the 512-token Llama and out
// of cache (Llama 7B, 4096 tokens): where the 16-bit kernels' targets are set.
inline constexpr std::string_view kConversionShapes[] = {"gpt2_small_prefill512", "llama7b_prefill512",
                                                         "llama7b_prefill4096"};

// Registers every conversion level this CPU runs on the workloads of kConversionShapes (taken
// from `workloads`, which register_rope_cases filled) at the given benchmark thread counts.
// Returns the ratio-table rows: each ceiling against its probe, and each kernel case of its level
// on the same shape against the ceiling (the kernel's limit_fraction over the conversions').
std::vector<Comparison> register_conversion_cases(std::deque<ConversionCase>& owner, std::deque<Workload>& workloads,
                                                  std::span<const int> threads, LeftOut& left_out);

}  // namespace ropecheck::bench
