// The kernels' rotation ceilings: each level of impls/kernels/rotation_alone_levels.h (a kernel's
// own storage code and rotation arithmetic with cos and sin in registers, nothing else) over the
// q and k of a RoPE workload, the very buffers the kernels stream, walked as the probe walks them
// and with the probe as its same-run limit. Its limit_fraction is the most any kernel of that
// level can reach on that shape and layout: a kernel also loads (or forms) its cos/sin and walks
// heads. Where a target lies above it, the level's instructions on this core stand in the way;
// a kernel's fraction of it says what its table and walk cost.
// Napkin math: the kernel's bytes (an element read and written once); per register of elements
// the kernel's multiply and FMA (and, interleaved, its pair swap), no cos/sin loads.
#pragma once

#include <deque>
#include <span>
#include <string_view>
#include <vector>

#include "bench/ratio_table.h"
#include "bench/rope_cases.h"
#include "core/spec.h"
#include "impls/kernels/rotation_alone_levels.h"

namespace ropecheck::bench {

struct RotationCase {
  RotationCase(const kernels::RotationAloneLevel* l, Workload* w, Layout lay) : level(l), workload(w), layout(lay) {}
  const kernels::RotationAloneLevel* level;
  Workload* workload;
  Layout layout;
};

// The shapes the rotation ceilings run on: in cache (GPT-2 small and Llama 7B at 512 tokens), out
// of cache (Llama 7B, 4096 tokens) and one decode token (in L1): the rows the kernels' targets
// are set for.
inline constexpr std::string_view kRotationShapes[] = {"gpt2_small_prefill512", "llama7b_prefill512",
                                                       "llama7b_prefill4096", "llama7b_decode_at4095"};

// Registers every rotation level this CPU runs on the workloads of kRotationShapes (taken from
// `workloads`, which register_rope_cases filled), both layouts, at the given benchmark thread
// counts. Returns the ratio-table rows: each ceiling against its probe, and the kernel case of its
// level, shape and layout against the ceiling (the kernel's limit_fraction over the rotation's).
std::vector<Comparison> register_rotation_cases(std::deque<RotationCase>& owner, std::deque<Workload>& workloads,
                                                std::span<const int> threads, LeftOut& left_out);

}  // namespace ropecheck::bench
