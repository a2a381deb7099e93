// rope_then_write/<rope id>: the fused form done in two passes, as an engine without a fused
// kernel does it (llama.cpp's ggml_rope_ext then ggml_set_rows): a RoPE implementation rotates q
// and k, then every valid token's rotated k and its v are scaled and narrowed into the cache. The
// reference a fused kernel is judged beside, and the two passes its speed-up is measured against.
#pragma once

#include <memory>

#include "impls/fused/rope_cache_impl.h"
#include "impls/rope_impl.h"

namespace ropecheck {

// `rope` must outlive the result; every layout, storage and direction; `padding` as declared.
std::unique_ptr<RopeCacheImpl> make_two_pass_rope_cache(const RopeImpl& rope,
                                                        PaddingRule padding = PaddingRule::skip_token);

}  // namespace ropecheck
