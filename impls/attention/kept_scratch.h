// Scratch floats attention keeps on the calling thread from one call to the next. A block's
// scores are block_rows x tokens floats (2 MiB at 2048 tokens, 4 at 4096) and the fused form's
// copy of k a whole k: glibc serves such sizes by mmap, so every call took fresh pages the kernel
// zeroes on first touch, and std::vector zeroed them again (measured at 2048 tokens, 1 thread,
// 8 heads of 128, AVX2 level: 7% of attention_blas's time in the kernel's page clearing, 5% in the
// vector's fill; bench/README.md). Kept, a buffer is allocated once per thread and size and only
// grows; the caller's team shares the caller's buffers (run_team's helpers live for one call).
#pragma once

#include <cstddef>
#include <span>

namespace ropecheck {

enum class ScratchUse { scores, queries, keys };

// `count` floats for `use`, kept by this thread until it ends (contents unspecified: what the
// last call left). A later call for the same use on the same thread gets the same memory back,
// so a caller must be done with it before it calls again.
std::span<float> kept_scratch(ScratchUse use, std::size_t count);

}  // namespace ropecheck
