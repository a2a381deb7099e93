// fused_cache/<level>: the own fused RoPE + paged KV-cache kernels (impls/kernels/
// fused_cache_kernel.h), one pass over k and v, at every ISA level; and the bench's fair two
// passes at the same level (kernel/<level> rotating k in place, then the same stores).
#pragma once

#include <memory>
#include <span>

#include "core/isa.h"
#include "impls/fused/rope_cache_impl.h"

namespace ropecheck {

// The registry's (impls/registry.inc): every layout, storage and direction, per-tensor and
// per-head scales, rotate_q_only padding (vLLM's); the RoPE specs kernel/<level> runs
// (interleaved and half-split, partial rotary, the scalings, multi-axis, both passes), on the
// calling thread. Available where the level is (core/isa.h).
std::unique_ptr<RopeCacheImpl> make_fused_cache_scalar();
std::unique_ptr<RopeCacheImpl> make_fused_cache_avx2();
std::unique_ptr<RopeCacheImpl> make_fused_cache_avx512();

// Two passes as an engine without a fused kernel runs them, the fair comparison for the bench:
// kernel/<level> rotates q and the caller's k IN PLACE (no copy), then every valid token's k and
// v row is written by the fused kernel's own vectorized stores. `call.k` must view `k`. The call
// is validated as RopeCacheImpl::apply validates it; padding tokens get rotate_q_only.
void rotate_in_place_then_write(Isa level, const RopeCacheCall& call, std::span<float> k);

}  // namespace ropecheck
