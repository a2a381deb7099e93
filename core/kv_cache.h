// The paged KV cache a fused RoPE call writes (issue 56): inference engines rotate q and k and
// write the rotated k and v into the cache in one call (vLLM's reshape_and_cache_flash and
// concat_and_cache_mla, FlashInfer's append_paged_kv_cache and its MLA append, llama.cpp's
// ggml_rope_ext then ggml_set_rows). This is what the call does around the rotation, as the
// spec's axes and pass are: where each token's row goes, how it is stored, what padding means.
//   A token's slot s addresses block s / block_size, offset s % block_size; a slot below 0 is
//   padding and addresses nothing.
//   Layouts, in elements:
//     nhd [blocks, block_size, kv_heads, head_dim]   (vLLM's flash layout, FlashInfer's NHD)
//     hnd [blocks, kv_heads, block_size, head_dim]   (FlashInfer's HND)
//     mla [blocks, block_size, latent_dim + head_dim] (DeepSeek's MLA: the latent kv_c, not
//         rotated, then k_pe, rotated; one "head", no v of its own: the latent is v's place)
//   FP8 storage quantizes with a scale, per tensor or per kv head, declared as multiplied
//   (FlashInfer, TensorRT-LLM: stored = x * scale) or divided (vLLM: stored = x / scale), then
//   narrows with saturation (core/fp8.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/fp8.h"

namespace ropecheck {

enum class CacheLayout { nhd, hnd, mla };
enum class CacheStorage { fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 };
enum class ScaleDirection { multiply, divide };
// What a padding token (slot < 0) does: nothing at all (its q left as it came), or its q rotated
// and only its cache write skipped. Each kernel declares which.
enum class PaddingRule { skip_token, rotate_q_only };

std::string_view to_string(CacheLayout layout);
std::string_view to_string(CacheStorage storage);
std::string_view to_string(ScaleDirection direction);
std::string_view to_string(PaddingRule rule);

bool is_fp8(CacheStorage storage);
// The FP8 format of an FP8 storage (core/fp8.h); the storage must be one.
Fp8Format fp8_format(CacheStorage storage);
int element_bytes(CacheStorage storage);

struct KvCacheSpec {
  CacheLayout layout = CacheLayout::nhd;
  CacheStorage storage = CacheStorage::fp32;
  std::int64_t blocks = 0;
  std::int64_t block_size = 16;  // the engines': 16, 32, 64, 128
  std::int64_t kv_heads = 0;     // mla: 1
  std::int64_t head_dim = 0;     // k's and v's features; mla: k_pe's (the rotary part, 64 in DeepSeek)
  std::int64_t latent_dim = 0;   // mla only: kv_c's features (512 in DeepSeek)
  // FP8 only, else empty: the scales k and v were quantized with, 1 (per tensor) or kv_heads (per head).
  std::vector<float> k_scale, v_scale;
  ScaleDirection scale_direction = ScaleDirection::divide;
  PaddingRule padding = PaddingRule::skip_token;
};

// Features in one cache row of one head: head_dim, or latent_dim + head_dim for mla.
std::int64_t row_features(const KvCacheSpec& spec);
// Slots the cache holds: blocks * block_size.
std::int64_t cache_slots(const KvCacheSpec& spec);
// Elements of the whole cache (of k, or of v; mla: of the one cache).
std::int64_t cache_elements(const KvCacheSpec& spec);

// The element index of (slot, head, feature) in the layout; slot >= 0 and in range (validated).
std::int64_t cache_index(const KvCacheSpec& spec, std::int64_t slot, std::int64_t head, std::int64_t feature);

// Throws InvalidInput, saying what, for a cache that cannot be: no blocks, a block size, head
// count or width not positive, a size that overflows, mla with kv_heads != 1 or no latent, FP8
// without its scales (or scales for another storage), a scale count that is neither 1 nor
// kv_heads, a scale that is not finite and positive.
void validate_cache(const KvCacheSpec& spec);

// Throws InvalidInput for a slot past the cache (the slot, the token and the cache's size named)
// and for two tokens with the same valid slot (which one the cache keeps is undefined).
void validate_slots(const KvCacheSpec& spec, std::span<const std::int64_t> slots);

// One cache element: `stored` (already in the stored domain) narrowed to the storage and written
// at element `index`; and an element read back, widened exactly. FP8 narrows saturating
// (core/fp8.h), bf16 and fp16 to nearest even (core/storage.h).
void write_cache_element(CacheStorage storage, std::span<std::byte> cache, std::int64_t index, float stored);
float read_cache_element(CacheStorage storage, std::span<const std::byte> cache, std::int64_t index);

// The scale of k (or v) for kv head `head`: one per tensor or per head; 1 where not FP8.
double cache_scale(const KvCacheSpec& spec, bool of_k, std::int64_t head);
// x in the stored domain (x * scale or x / scale, as declared), and back.
double to_stored_domain(double x, double scale, ScaleDirection direction);
double from_stored_domain(double stored, double scale, ScaleDirection direction);

}  // namespace ropecheck
