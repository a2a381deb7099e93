// The fast kernel's per-thread state for one spec: its frequencies, its scratch table and angles,
// and the cos/sin rows it keeps across calls (table_rows.h). kernel/<level> (kernel_rope.cc) and
// the fused RoPE + KV-cache kernels (impls/fused/fused_rope_cache.cc) both run the level's token
// loop (rope_kernel.h) on it, so both form every row the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "core/frequency.h"
#include "core/position_axes.h"
#include "core/spec.h"
#include "impls/kernels/rope_kernel.h"
#include "impls/kernels/table_rows.h"

namespace ropecheck {

// Page-aligned storage for the scratch below. With malloc's 16-byte alignment, where the table
// landed within a cache line depended on everything the process had allocated before (its
// command line among it), and with it whether the vector loads and stores of the table split two
// lines: kernel_bf16/avx512bf16 on llama3_8b_gqa_prefill512 ran 9% apart between two processes
// of one build whose argv[0] differed in length (bench/README.md), which a gate reads as a
// change of speed. Aligned to a cache line, where it landed within a page still decided which L1
// sets it shared with q and k: decode's L1 misses moved by 0.4% of its counted cycles between
// processes whose environments differed in length (gate/README.md, "Counted"). A page each (the
// scratch is a few KiB a thread) places it the same in every process.
template <typename T>
struct ScratchAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{4096};
  ScratchAllocator() = default;
  template <typename U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const ScratchAllocator<U>&) const noexcept { return true; }
};

// The frequencies, the cos/sin scratch table and the cached table rows (TableRows) of the last
// spec and kernel this thread used. Decoding applies RoPE to one token at a time: recomputing
// rotary_dim/2 powers and allocating per call would cost more than rotating the token (the
// decode benchmark measures it).
using AnyKernel = void (*)();

struct KernelScratch {
  AnyKernel kernel = nullptr;  // the level: each forms its own bits, so each has its own rows
  int rotary_dim = 0;
  double base = 0;
  Layout layout = Layout::interleaved;  // the rows hold the table in the layout's form
  RopeScaling scaling;
  PositionAxes axes;
  std::vector<double, ScratchAllocator<double>> theta;
  double scale = 1.0;
  std::vector<float, ScratchAllocator<float>> table;
  std::vector<double, ScratchAllocator<double>> angles;
  TableRows rows;
  // Multi-axis specs: each row float's axis, and a scratch row per axis (rope_kernel.h).
  std::vector<std::int32_t, ScratchAllocator<std::int32_t>> row_axis;
  std::vector<float, ScratchAllocator<float>> axis_rows;

  void prepare(AnyKernel for_kernel, const RopeSpec& spec) {
    if (for_kernel == kernel && spec.rotary_dim == rotary_dim && spec.base == base &&
        spec.layout == layout && spec.scaling == scaling && spec.axes == axes) {
      return;
    }
    const auto frequencies = inverse_frequencies(spec);
    theta.assign(frequencies.begin(), frequencies.end());
    if (spec.pass == Pass::backward) {
      for (double& t : theta) t = -t;
    }
    scale = attention_factor(spec);
    // One row, as a kept one (TableRows::row_bytes: the table and its slack).
    table.assign(TableRows::row_bytes(spec.rotary_dim) / sizeof(float), 0.0f);
    angles.assign(2 * static_cast<std::size_t>(spec.rotary_dim), 0.0);
    rows.reset(spec.rotary_dim);
    prepare_axes(spec);
    kernel = for_kernel;
    rotary_dim = spec.rotary_dim;
    base = spec.base;
    layout = spec.layout;
    scaling = spec.scaling;
    axes = spec.axes;
  }

  // The axis of each float of a row: the cos and sin floats of pair i take pair i's axis.
  void prepare_axes(const RopeSpec& spec) {
    const auto floats = static_cast<std::size_t>(kernels::row_floats(spec.rotary_dim));
    row_axis.assign(floats, 0);
    axis_rows.assign(kMaxAxes * floats, 0.0f);
    const std::vector<int> pair_axis = pair_axes(spec.axes, spec.rotary_dim);
    const auto d = static_cast<std::size_t>(spec.rotary_dim);
    for (std::size_t i = 0; i < pair_axis.size(); ++i) {
      const auto a = static_cast<std::int32_t>(pair_axis[i]);
      if (spec.layout == Layout::interleaved) {  // cos_dup and sin_signed: features 2i, 2i + 1
        row_axis[2 * i] = row_axis[2 * i + 1] = row_axis[d + 2 * i] = row_axis[d + 2 * i + 1] = a;
      } else {  // cos and sin: entry i of each
        row_axis[i] = row_axis[d + i] = a;
      }
    }
  }
};

}  // namespace ropecheck
