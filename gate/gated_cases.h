// What `ropecheck gate` gates by default: one rule, in one place (gate/README.md explains it).
//   kernels: the fp32, bf16 and fp16 RoPE kernels, each at its fastest level available on both
//            sides on this machine, on an in-cache prefill (Llama 3 8B GQA, 512 tokens: 10 MiB of
//            q and k in fp32, 5 MiB in 16 bits), an out-of-cache prefill (Llama 7B, 4096 tokens:
//            256 / 128 MiB) and decode (one token at position 4095: 32 / 16 KiB), interleaved;
//   attention: attention_blas, causal, 512 tokens x 8 heads x 64, one OpenBLAS thread.
// A case whose working set is on a cache boundary of the machine is flagged (cache_boundary.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ropecheck {

// The shapes of bench/format/shapes.h the kernels are gated on, and the layout.
inline constexpr std::string_view kGatedShapes[] = {
    "llama3_8b_gqa_prefill512",  // in cache on common machines: between L2 and L3
    "llama7b_prefill4096",       // out of cache: DRAM
    "llama7b_decode_at4095",     // decode: one token, L1-sized
};
inline constexpr std::string_view kGatedLayout = "interleaved";

// The kernel families and their levels, fastest first (impls/kernels/kernel_rope.cc's ids).
inline constexpr std::string_view kGatedKernelFamilies[] = {"kernel", "kernel_bf16", "kernel_fp16"};
inline constexpr std::string_view kKernelLevelsFastestFirst[] = {"avx512bf16", "avx512", "avx2", "sve",
                                                                  "neon", "scalar"};

// The attention problem (bench/format/shapes.h's kAttentionProblems), at one OpenBLAS thread.
inline constexpr long kGatedAttentionTokens = 512;
inline constexpr int kGatedAttentionHeadDim = 64;

// Per family, the fastest level among `available` (implementation ids available on both sides);
// families with none are left out. E.g. {"kernel/avx512", "kernel_bf16/avx512bf16", ...}.
std::vector<std::string> fastest_kernels(const std::vector<std::string>& available);

// The Google Benchmark filter (a regex over case names) of the default rule for these kernels.
std::string default_gate_filter(const std::vector<std::string>& kernels);

// Counted (`gate --measure counted`, `count`): the kernel levels Valgrind runs, fastest first.
// Valgrind has no AVX-512 (its CPUID shows none, so nothing dispatches to it there) and no SVE.
inline constexpr std::string_view kCountedLevelsFastestFirst[] = {"avx2", "neon", "scalar"};

// Per family, the fastest level among `available` that Valgrind runs.
std::vector<std::string> fastest_counted_kernels(const std::vector<std::string>& available);

// The level the counted kernels run at ("avx2", "scalar", or "" for none), and a note when this
// CPU has a faster one that Valgrind cannot run ("" otherwise).
std::string counted_level(const std::vector<std::string>& counted_kernels);
std::string counted_level_note(const std::string& level);

// Which measure judges a gated case in a counted gate, and why: counted when its working set fits
// the simulated last level (gate/counted_runner.h), else real time (callgrind models no memory
// bandwidth and no prefetcher: there a removed prefetch would count as fewer instructions).
struct CaseRoute {
  bool counted = false;
  std::string why;
};
CaseRoute route_case(const std::string& case_name);

// The timed half of a counted gate under the default rule: the kernels (each at its own fastest
// level) on the gated shapes that route_case() sends to time; "" when there are none.
std::string timed_half_filter(const std::vector<std::string>& kernels);

// The filter for --base-plugin/--plugin ("plugin") and --base-python/--python ("python"): every
// case of that kind on the gated shapes.
std::string outside_gate_filter(std::string_view kind);

}  // namespace ropecheck
