// The fused cache call's mutants (rope_cache_mutant.h), one bug class each, as the engines' fused
// kernels have shipped them (issue 56). Each is killed by the properties in
// properties/rope_cache_properties.cc (docs/checks.md's kill matrix).
#include <cmath>
#include <memory>

#include "core/fp8.h"
#include "impls/mutants/rope_cache_mutant.h"

namespace ropecheck {
namespace mutants {
namespace {

// vLLM PR #43869: the padding slot -1 used as an index, so padding tokens overwrote the cache's
// last slot (Python's x[-1], or an unsigned wrap).
class SlotMinusOneIndexed final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_slot_minus_one_indexed"; }
  std::string_view summary() const override { return "slot -1 taken as an index: padding overwrites the last slot"; }
  bool writes(std::int64_t slot) const override { return slot >= -1; }
  std::int64_t element(const KvCacheSpec& cache, std::int64_t slot, std::int64_t head,
                       std::int64_t feature) const override {
    return cache_index(cache, slot < 0 ? slot + cache_slots(cache) : slot, head, feature);
  }
};

// block = slot % block_size, offset = slot / block_size: the two swapped. Kept inside the cache
// (each wrapped to its range) so that the bug shows as rows in the wrong place, not a crash.
class BlockOffsetSwapped final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_block_offset_swapped"; }
  std::string_view summary() const override { return "block and offset swapped in the slot mapping"; }
  std::int64_t element(const KvCacheSpec& cache, std::int64_t slot, std::int64_t head,
                       std::int64_t feature) const override {
    const std::int64_t block = (slot % cache.block_size) % cache.blocks;
    const std::int64_t offset = (slot / cache.block_size) % cache.block_size;
    return cache_index(cache, block * cache.block_size + offset, head, feature);
  }
};

// The HND cache's strides, [blocks, kv_heads, block_size, head_dim], used on an NHD cache.
class HndStrideOnNhd final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_hnd_stride_on_nhd"; }
  std::string_view summary() const override { return "the HND layout's strides used on an NHD cache"; }
  std::int64_t element(const KvCacheSpec& cache, std::int64_t slot, std::int64_t head,
                       std::int64_t feature) const override {
    if (cache.layout != CacheLayout::nhd) return cache_index(cache, slot, head, feature);
    KvCacheSpec hnd = cache;
    hnd.layout = CacheLayout::hnd;
    return cache_index(hnd, slot, head, feature);
  }
};

// vLLM divides by the scale where FlashInfer and TensorRT-LLM multiply: a kernel written for one
// convention called with the other's scale.
class ScaleDirectionFlipped final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_scale_direction_flipped"; }
  std::string_view summary() const override { return "the FP8 scale multiplied where declared divided, and back"; }
  float to_stored(float x, float scale, ScaleDirection direction, bool) const override {
    return direction == ScaleDirection::multiply ? x / scale : x * scale;
  }
};

// A non-saturating cast to FP8: past the largest value e4m3 becomes NaN (it has no Inf) and e5m2
// Inf, as eager torch.to(float8_e4m3fn) did (pytorch/ao #1912).
class Fp8Unsaturated final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_fp8_unsaturated"; }
  std::string_view summary() const override { return "FP8 narrowed without saturation: overflow becomes NaN or Inf"; }
  void narrow(CacheStorage storage, std::span<std::byte> cache, std::int64_t at, float stored) const override {
    if (!is_fp8(storage)) return RopeCacheMutant::narrow(storage, cache, at, stored);
    const Fp8Format format = fp8_format(storage);
    if (std::abs(stored) <= fp8_traits(format).max) return RopeCacheMutant::narrow(storage, cache, at, stored);
    const std::uint8_t overflow = format == Fp8Format::e4m3 ? 0x7F : 0x7C;  // NaN, Inf
    cache[static_cast<std::size_t>(at)] = static_cast<std::byte>(overflow | (std::signbit(stored) ? 0x80 : 0));
  }
};

// v written, unrotated, into k's place (the two arguments mixed up; under mla, k_pe unrotated).
class VInKPlace final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_v_in_k_place"; }
  std::string_view summary() const override { return "v written unrotated into k's place"; }
  bool k_from_v() const override { return true; }
};

// The padding rule violated: declares skip_token (a padding token changes nothing) but rotates
// the padding tokens' q, as a kernel that rotates every row before it looks at the slots does.
class PaddingQRotated final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_padding_q_rotated"; }
  std::string_view summary() const override { return "declares skip_token, but rotates a padding token's q"; }
  bool rotates_padding_q() const override { return true; }
};

// TensorRT-LLM PR #16916: the FP8 scale dropped on one path; here v's.
class VScaleDropped final : public RopeCacheMutant {
  std::string_view id() const override { return "mutant/cache_v_scale_dropped"; }
  std::string_view summary() const override { return "the FP8 scale dropped on v's path"; }
  float to_stored(float x, float scale, ScaleDirection direction, bool of_k) const override {
    return of_k ? RopeCacheMutant::to_stored(x, scale, direction, of_k) : x;
  }
};

}  // namespace
}  // namespace mutants

std::unique_ptr<RopeCacheImpl> make_mutant_cache_slot_minus_one_indexed() {
  return std::make_unique<mutants::SlotMinusOneIndexed>();
}
std::unique_ptr<RopeCacheImpl> make_mutant_cache_block_offset_swapped() {
  return std::make_unique<mutants::BlockOffsetSwapped>();
}
std::unique_ptr<RopeCacheImpl> make_mutant_cache_hnd_stride_on_nhd() {
  return std::make_unique<mutants::HndStrideOnNhd>();
}
std::unique_ptr<RopeCacheImpl> make_mutant_cache_scale_direction_flipped() {
  return std::make_unique<mutants::ScaleDirectionFlipped>();
}
std::unique_ptr<RopeCacheImpl> make_mutant_cache_fp8_unsaturated() {
  return std::make_unique<mutants::Fp8Unsaturated>();
}
std::unique_ptr<RopeCacheImpl> make_mutant_cache_v_in_k_place() { return std::make_unique<mutants::VInKPlace>(); }
std::unique_ptr<RopeCacheImpl> make_mutant_cache_padding_q_rotated() {
  return std::make_unique<mutants::PaddingQRotated>();
}
std::unique_ptr<RopeCacheImpl> make_mutant_cache_v_scale_dropped() {
  return std::make_unique<mutants::VScaleDropped>();
}

}  // namespace ropecheck
