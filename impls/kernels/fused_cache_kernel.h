// The fused RoPE + paged KV-cache kernel (issue 56) at each ISA level: per token, q rotated in
// place by the level's own rotation (rope_kernel.h: the same table rows, the same row code); k
// read once, rotated with the same arithmetic, taken into the stored domain (x * scale or
// x / scale, in fp32) and narrowed straight into the token's cache row; v read once, scaled and
// narrowed into its row. One pass: no temporary k. A token whose slot is below 0 has its q rotated
// and nothing written (vLLM's rule, rotate_q_only).
// Plain C types only, as rope_kernel.h: the levels' files are compiled with their own flags.
// Napkin math (Llama 3 8B, 32 q over 8 kv heads of 128, fp8 cache): q 16 KiB read and written,
// k and v 4 KiB each read, 2 KiB of cache rows written a token; two passes also write and read
// k back (8 KiB): (2q + 4k + 2v) / (2q + 2k + 2v) of the bytes.
#pragma once

#include <cstdint>

#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {

// The cache's element storage (core/kv_cache.h's CacheStorage, as plain data).
enum class CacheCode : int { fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 };

inline int cache_code_bytes(CacheCode code) {
  return code == CacheCode::fp32 ? 4 : code == CacheCode::bf16 || code == CacheCode::fp16 ? 2 : 1;
}

// RopeKernelArgs' q is rotated in place; its k is the caller's k, only read (k_heads: the kv heads).
struct FusedCacheArgs : RopeKernelArgs<float> {
  const float* v = nullptr;  // [tokens][k_heads][v_dim]
  std::int64_t v_dim = 0;    // head_dim, or the latent's width (mla)
  const std::int64_t* slots = nullptr;
  unsigned char* k_cache = nullptr;  // the cache's bytes
  unsigned char* v_cache = nullptr;  // mla: the same as k_cache (the latent takes v's place)
  CacheCode storage = CacheCode::fp32;
  bool head_major = false;           // hnd [blocks][heads][block_size][row]; else nhd and mla
  std::int64_t block_size = 0;
  std::int64_t row_features = 0;     // one head's cache row: head_dim, or latent + head_dim (mla)
  std::int64_t k_offset = 0;         // k's first feature in the row: 0, or the latent's width (mla)
  std::int64_t v_offset = 0;         // v's: 0
  // FP8 scales (nullptr: none, the value is stored as it is): one per tensor (stride 0) or one per
  // kv head (stride 1); divided by when `divide`, else multiplied by. In fp32, as the engines do:
  // a division is not a multiplication by the reciprocal (another rounding).
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  int k_scale_stride = 0, v_scale_stride = 0;
  bool divide = false;
};

// The fused call (rotate_q_only padding): needs the level's CPU support (core/isa.h).
void fused_rope_cache_scalar(const FusedCacheArgs& args);
void fused_rope_cache_avx2(const FusedCacheArgs& args);
void fused_rope_cache_avx512(const FusedCacheArgs& args);
#if defined(__aarch64__)
void fused_rope_cache_neon(const FusedCacheArgs& args);
void fused_rope_cache_sve(const FusedCacheArgs& args);  // any vector length
#endif

// The write pass alone, with the fused kernel's own stores: every valid token's k row (as it is,
// not rotated) and v row, scaled and narrowed into the cache; q and the table unused. The second
// pass of a fair two-pass (the bench's: the level's kernel rotates k in place first).
void cache_write_scalar(const FusedCacheArgs& args);
void cache_write_avx2(const FusedCacheArgs& args);
void cache_write_avx512(const FusedCacheArgs& args);
#if defined(__aarch64__)
void cache_write_neon(const FusedCacheArgs& args);
void cache_write_sve(const FusedCacheArgs& args);
#endif

// The SIMD FP8 narrowing alone (saturating, round to nearest even, NaN stays NaN: core/fp8.h's
// fp8_from_float, bit for bit), n floats into n codes: for the exhaustive test.
void fp8_narrow_avx2(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2);
void fp8_narrow_avx512(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2);
#if defined(__aarch64__)
void fp8_narrow_neon(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2);
void fp8_narrow_sve(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2);
#endif

}  // namespace ropecheck::kernels
