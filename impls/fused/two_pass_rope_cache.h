// rope_then_write/<rope id>: the fused form done in two passes, as an engine without a fused
// kernel does it (llama.cpp's ggml_rope_ext then ggml_set_rows): a RoPE implementation rotates q
// and k, then every valid token's rotated k and its v are scaled and narrowed into the cache. The
// reference a fused kernel is judged beside, and the two passes its speed-up is measured against.
#pragma once

#include <memory>
#include <string>

#include "impls/fused/rope_cache_impl.h"
#include "impls/rope_impl.h"

namespace ropecheck {

// `rope` must outlive the result; every layout, storage and direction; `padding` as declared.
// Its id is "rope_then_write/<rope id>" unless `id` names another.
std::unique_ptr<RopeCacheImpl> make_two_pass_rope_cache(const RopeImpl& rope,
                                                        PaddingRule padding = PaddingRule::skip_token,
                                                        std::string id = "");

// The registry's two-pass references (impls/registry.inc): rope_then_write/<level>, the fast
// kernel of that level (kernel/<level>) then the write; available where that kernel is.
std::unique_ptr<RopeCacheImpl> make_rope_then_write_scalar();
std::unique_ptr<RopeCacheImpl> make_rope_then_write_avx2();
std::unique_ptr<RopeCacheImpl> make_rope_then_write_avx512();

}  // namespace ropecheck
