// One fused call (plugin.h's apply_rope_cache) as llama.cpp's graph builds it: ggml_rope_ext on q
// and k, then ggml_set_rows of the rotated k (and of v) into the cache tensor, the pair llama.cpp
// fuses on its GPUs. One graph, computed by the CPU backend:
//   q       [head_dim, q_heads, tokens] over the caller's q, rotated in place (every token: a
//           padding token's q is rotated too, ROPECHECK_PADDING_ROTATE_Q_ONLY)
//   k, v    the valid tokens' rows only (ggml_get_rows by token index): llama.cpp never sends a
//           padding token to set_rows, its batch holds none; k's rows then go through
//           ggml_rope_ext out of place (k is read-only), at the valid tokens' positions
//   caches  2-D views over the caller's cache bytes, written by ggml_set_rows (I64 row indices),
//           which converts each fp32 row to the cache's type with ggml's own conversion:
//     NHD   [kv_heads * head_dim, blocks * block_size], row = slot: llama.cpp's K and V cache
//           (one row of n_embd_k_gqa a cell)
//     HND   [head_dim, blocks * kv_heads * block_size], one row per (token, kv head) at
//           (block * kv_heads + h) * block_size + offset: the per-element indices llama.cpp
//           computes for its transposed V cache, here per head row
//     MLA   [latent_dim + head_dim, blocks * block_size], row = slot, the row ggml_concat(kv_c,
//           k_pe rotated): llama.cpp's MLA cache (DeepSeek-2's k cache, v read from its front)
// Intermediates (the gathered rows, the rotated k, the concat) are placed by ggml's graph
// allocator; positions and indices live in a backend buffer of their own. ggml has no FP8 type:
// fp32, fp16 and bf16 caches only.
// A multi-axis call ggml takes only repacked (ggml_neox_rows.h) is rotated by the RoPE entry's
// graph first (q in place, k in the plugin's copy); this graph then only writes (rotate = false):
// get_rows and set_rows alone.
//   RopeCacheGraph::build(...) every call (the "ggml" plugin);
//   RopeCacheGraph::matches(...) then compute() alone while the call's shape, spec, buffers and
//   number of valid tokens are the same (the "ggml_compute" plugin).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"
#include "ggml_rope_parameters.h"
#include "ropecheck/plugin.h"

namespace ropecheck_ggml_peer {

class RopeCacheGraph {
 public:
  RopeCacheGraph() = default;
  ~RopeCacheGraph();
  RopeCacheGraph(const RopeCacheGraph&) = delete;
  RopeCacheGraph& operator=(const RopeCacheGraph&) = delete;

  // Builds the graph of `call` (every buffer 32-byte aligned; a storage ggml has; with `rotate`,
  // a spec whose rows ggml rotates as they lie, not needs_neox_rows; without it q and k come
  // rotated already and the graph writes the cache alone). "" or why not.
  std::string build(const ropecheck_plugin_cache_call& call, const RopeParameters& parameters, bool rotate);
  // True when `call` is what the graph was built for, but for positions' and slots' values.
  bool matches(const ropecheck_plugin_cache_call& call, bool rotate) const;
  // Writes the call's positions and indices into the graph's inputs and computes it.
  bool compute(ggml_backend_t backend, const ropecheck_plugin_cache_call& call);

 private:
  void release();
  void write_inputs(const ropecheck_plugin_cache_call& call);

  ggml_context* context_ = nullptr;  // the graph's tensors (metadata only)
  ggml_context* inputs_context_ = nullptr;
  ggml_backend_buffer_t inputs_buffer_ = nullptr;  // positions, indices, freq_factors
  std::vector<ggml_backend_buffer_t> wrapped_;     // the caller's q, k, v, caches
  ggml_gallocr_t allocator_ = nullptr;
  ggml_cgraph* graph_ = nullptr;
  ggml_tensor* positions_ = nullptr;        // every token's (q)
  ggml_tensor* valid_positions_ = nullptr;  // the valid tokens' (k)
  ggml_tensor* valid_tokens_ = nullptr;     // I32: which tokens' rows get_rows gathers
  ggml_tensor* rows_ = nullptr;             // I64: where set_rows writes each gathered row
  bool multi_ = false;
  bool rotate_ = true;
  std::int64_t valid_ = 0;
  // What the graph was built for (matches()).
  ropecheck_plugin_spec spec_{};
  std::vector<double> factors_;
  ropecheck_plugin_cache cache_{};
  ropecheck_plugin_cache_call call_{};
};

}  // namespace ropecheck_ggml_peer
