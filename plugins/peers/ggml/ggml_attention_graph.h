// One attention call's ggml graph, built as llama.cpp builds its attention with flash attention on
// (llama-graph.cpp, build_attn_mha): q [head_dim, q_heads, tokens] over the caller's memory, k and
// v copied into the KV cache's type by ggml_cpy (F16, as llama.cpp's default cache keeps them, or
// left F32), all three permuted to [head_dim, tokens, heads] views, the causal mask an F16
// [tokens, tokens] tensor (0 where a key is visible, -inf where not; this ggml pads it no more:
// GGML_KQ_MASK_PAD is gone), and ggml_flash_attn_ext(q, k, v, mask, 1/sqrt(head_dim), 0, 0), whose
// result [head_dim, q_heads, tokens] is ropecheck's out layout, placed over the caller's out.
// Intermediates (the cache copies) come from a graph allocator kept across calls, as llama.cpp's
// scheduler keeps its compute buffer; the mask is kept while the shape is the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"
#include "ropecheck/attention_plugin.h"

namespace ropecheck_ggml_peer {

class AttentionGraph {
 public:
  explicit AttentionGraph(ggml_type kv_type) : kv_type_(kv_type) {}
  ~AttentionGraph();
  AttentionGraph(const AttentionGraph&) = delete;
  AttentionGraph& operator=(const AttentionGraph&) = delete;

  // Builds and computes `call` on `backend`. "" or why not.
  std::string run(ggml_backend_t backend, const ropecheck_attention_call& call);

 private:
  void release_call();
  const std::uint16_t* mask_for(std::int64_t tokens);

  ggml_type kv_type_;
  ggml_gallocr_t allocator_ = nullptr;
  ggml_context* context_ = nullptr;
  std::vector<ggml_backend_buffer_t> buffers_;  // the caller's memory wrapped, one per tensor
  std::vector<std::uint16_t> mask_;             // F16 bits, [tokens][tokens] from an aligned start
  std::int64_t mask_tokens_ = 0;
  std::vector<float> staging_;                  // q, k, v, out of a caller whose memory is unaligned
};

}  // namespace ropecheck_ggml_peer
