// RopeCacheGraph (ggml_rope_cache_graph.h): ggml's public API only (ggml.h, ggml-alloc.h,
// ggml-backend.h).
#include "ggml_rope_cache_graph.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace ropecheck_ggml_peer {
namespace {

// What ggml_backend_cpu_buffer_from_ptr asserts of a pointer (ggml's TENSOR_ALIGNMENT).
constexpr std::uintptr_t kAlignment = 32;

ggml_type cache_type(int32_t storage) {
  switch (storage) {
    case ROPECHECK_CACHE_FP16: return GGML_TYPE_F16;
    case ROPECHECK_CACHE_BF16: return GGML_TYPE_BF16;
    default: return GGML_TYPE_F32;
  }
}

std::int64_t valid_tokens(const ropecheck_plugin_cache_call& call) {
  return std::count_if(call.slots, call.slots + call.tokens, [](std::int64_t s) { return s >= 0; });
}

// The rope of x: in place (q, a view of x) or into a fresh tensor (k, read-only).
ggml_tensor* rope(ggml_context* context, ggml_tensor* x, ggml_tensor* positions, ggml_tensor* factors,
                  const RopeParameters& p, bool in_place) {
  int sections[kGgmlAxes];  // ggml_rope_multi takes them as a non-const int*
  std::copy(std::begin(p.sections), std::end(p.sections), sections);
  if (p.multi) {
    return in_place ? ggml_rope_multi_inplace(context, x, positions, factors, p.n_dims, sections, p.mode,
                                              p.n_ctx_orig, p.freq_base, p.freq_scale, p.ext_factor, p.attn_factor,
                                              p.beta_fast, p.beta_slow)
                    : ggml_rope_multi(context, x, positions, factors, p.n_dims, sections, p.mode, p.n_ctx_orig,
                                      p.freq_base, p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast,
                                      p.beta_slow);
  }
  return in_place ? ggml_rope_ext_inplace(context, x, positions, factors, p.n_dims, p.mode, p.n_ctx_orig,
                                          p.freq_base, p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast,
                                          p.beta_slow)
                  : ggml_rope_ext(context, x, positions, factors, p.n_dims, p.mode, p.n_ctx_orig, p.freq_base,
                                  p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast, p.beta_slow);
}

}  // namespace

RopeCacheGraph::~RopeCacheGraph() { release(); }

void RopeCacheGraph::release() {
  if (allocator_ != nullptr) ggml_gallocr_free(allocator_);
  allocator_ = nullptr;
  for (ggml_backend_buffer_t buffer : wrapped_) ggml_backend_buffer_free(buffer);
  wrapped_.clear();
  if (inputs_buffer_ != nullptr) ggml_backend_buffer_free(inputs_buffer_);
  inputs_buffer_ = nullptr;
  if (context_ != nullptr) ggml_free(context_);
  if (inputs_context_ != nullptr) ggml_free(inputs_context_);
  context_ = inputs_context_ = nullptr;
  graph_ = nullptr;
  positions_ = valid_positions_ = valid_tokens_ = rows_ = nullptr;
}

std::string RopeCacheGraph::build(const ropecheck_plugin_cache_call& call, const RopeParameters& p, bool rotate) {
  release();
  const ropecheck_plugin_spec& spec = *call.spec;
  const ropecheck_plugin_cache& c = *call.cache;
  const bool mla = c.layout == ROPECHECK_CACHE_MLA;
  const bool hnd = c.layout == ROPECHECK_CACHE_HND;
  const std::int64_t tokens = call.tokens, valid = valid_tokens(call), heads = c.kv_heads, d = c.head_dim;
  const std::int64_t slots = c.blocks * c.block_size;
  const std::int64_t axes = p.multi ? kGgmlAxes : 1;

  // The inputs: positions (every token's and the valid tokens'), the gather and scatter indices,
  // the frequency factors; in a CPU buffer of their own, written per call.
  constexpr std::size_t kInputs = 5;
  ggml_init_params input_params{ggml_tensor_overhead() * kInputs, nullptr, /*no_alloc=*/true};
  inputs_context_ = ggml_init(input_params);
  if (inputs_context_ == nullptr) return "ggml_init failed";
  positions_ = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_I32, tokens * axes);
  ggml_tensor* factors = nullptr;
  if (!p.freq_factors.empty()) {
    factors = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_F32, static_cast<std::int64_t>(p.freq_factors.size()));
  }
  if (valid > 0) {
    valid_positions_ = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_I32, valid * axes);
    valid_tokens_ = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_I32, valid);
    rows_ = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_I64, hnd ? valid * heads : valid);
  }
  inputs_buffer_ = ggml_backend_alloc_ctx_tensors_from_buft(inputs_context_, ggml_backend_cpu_buffer_type());
  if (inputs_buffer_ == nullptr) return "cannot allocate the positions and indices";
  if (factors != nullptr) {
    ggml_backend_tensor_set(factors, p.freq_factors.data(), 0, ggml_nbytes(factors));
  }

  constexpr std::size_t kNodes = 32;
  ggml_init_params params{ggml_tensor_overhead() * kNodes + ggml_graph_overhead_custom(kNodes, false), nullptr,
                          /*no_alloc=*/true};  // metadata only: the data is the caller's or the allocator's
  context_ = ggml_init(params);
  if (context_ == nullptr) return "ggml_init failed";
  graph_ = ggml_new_graph_custom(context_, kNodes, false);
  // A tensor over the caller's memory (no copy).
  const auto wrap = [&](ggml_tensor* tensor, const void* data) {
    if (reinterpret_cast<std::uintptr_t>(data) % kAlignment != 0) return false;
    void* at = const_cast<void*>(data);  // k and v are only read: ggml's tensors have no const
    ggml_backend_buffer_t buffer = ggml_backend_cpu_buffer_from_ptr(at, ggml_nbytes(tensor));
    if (buffer == nullptr) return false;
    wrapped_.push_back(buffer);
    return ggml_backend_tensor_alloc(buffer, tensor, at) == GGML_STATUS_SUCCESS;
  };

  // q: every token, rotated in place.
  if (rotate) {
    ggml_tensor* q = ggml_new_tensor_3d(context_, GGML_TYPE_F32, spec.head_dim, call.q_heads, tokens);
    if (!wrap(q, call.q)) return "cannot place q";
    ggml_build_forward_expand(graph_, rope(context_, q, positions_, factors, p, /*in_place=*/true));
  }

  if (valid > 0) {
    // k and v: the valid tokens' rows gathered, k's then rotated at their positions.
    const std::int64_t v_width = mla ? c.latent_dim : heads * d;
    ggml_tensor* k = ggml_new_tensor_2d(context_, GGML_TYPE_F32, heads * d, tokens);
    ggml_tensor* v = ggml_new_tensor_2d(context_, GGML_TYPE_F32, v_width, tokens);
    if (!wrap(k, call.k)) return "cannot place k";
    if (!wrap(v, call.v)) return "cannot place v";
    ggml_tensor* k_rows = ggml_reshape_3d(context_, ggml_get_rows(context_, k, valid_tokens_), d, heads, valid);
    ggml_tensor* k_rotated = rotate ? rope(context_, k_rows, valid_positions_, factors, p, /*in_place=*/false) : k_rows;
    ggml_tensor* v_rows = ggml_get_rows(context_, v, valid_tokens_);

    const ggml_type type = cache_type(c.storage);
    const auto write = [&](ggml_tensor* cache, ggml_tensor* rows) {
      ggml_build_forward_expand(graph_, ggml_set_rows(context_, cache, rows, rows_));
    };
    if (mla) {  // one row a slot: [kv_c | k_pe]
      ggml_tensor* k_cache = ggml_new_tensor_2d(context_, type, c.latent_dim + d, slots);
      if (!wrap(k_cache, call.k_cache)) return "cannot place the cache";
      write(k_cache, ggml_concat(context_, v_rows, ggml_reshape_2d(context_, k_rotated, d, valid), 0));
    } else {
      // NHD: a row of kv_heads * head_dim a slot; HND: a row of head_dim a (slot, head).
      const std::int64_t width = hnd ? d : heads * d, rows = hnd ? slots * heads : slots;
      ggml_tensor* k_cache = ggml_new_tensor_2d(context_, type, width, rows);
      ggml_tensor* v_cache = ggml_new_tensor_2d(context_, type, width, rows);
      if (!wrap(k_cache, call.k_cache)) return "cannot place the k cache";
      if (!wrap(v_cache, call.v_cache)) return "cannot place the v cache";
      const std::int64_t sources = hnd ? valid * heads : valid;
      write(k_cache, ggml_reshape_2d(context_, k_rotated, width, sources));
      write(v_cache, ggml_reshape_2d(context_, v_rows, width, sources));
    }
  }

  allocator_ = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
  if (allocator_ == nullptr || !ggml_gallocr_alloc_graph(allocator_, graph_)) return "cannot allocate the graph";

  multi_ = p.multi;
  rotate_ = rotate;
  valid_ = valid;
  spec_ = spec_without_pointers(spec);
  factors_ = spec_factors(spec);
  cache_ = c;
  call_ = call;
  return "";
}

bool RopeCacheGraph::matches(const ropecheck_plugin_cache_call& call, bool rotate) const {
  const ropecheck_plugin_cache& c = *call.cache;
  if (graph_ == nullptr || rotate != rotate_ || call.q != call_.q || call.k != call_.k || call.v != call_.v ||
      call.k_cache != call_.k_cache || call.v_cache != call_.v_cache || call.q_heads != call_.q_heads ||
      call.tokens != call_.tokens || valid_tokens(call) != valid_ || c.layout != cache_.layout ||
      c.storage != cache_.storage || c.blocks != cache_.blocks || c.block_size != cache_.block_size ||
      c.kv_heads != cache_.kv_heads || c.head_dim != cache_.head_dim || c.latent_dim != cache_.latent_dim) {
    return false;
  }
  const ropecheck_plugin_spec spec = spec_without_pointers(*call.spec);
  return std::memcmp(&spec, &spec_, sizeof spec) == 0 && spec_factors(*call.spec) == factors_;
}

void RopeCacheGraph::write_inputs(const ropecheck_plugin_cache_call& call) {
  const ropecheck_plugin_cache& c = *call.cache;
  // The positions of `tokens` as ggml takes them: int32, one a token, or axis-major four a token
  // for ggml_rope_multi ({t...}, {h...}, {w...}, {e...}; an axis the mode lacks is 0).
  const auto positions_of = [&](const std::vector<std::int64_t>& tokens, ggml_tensor* into) {
    const auto n = static_cast<std::int64_t>(tokens.size());
    const std::int64_t axes = multi_ ? kGgmlAxes : 1;
    std::vector<std::int32_t> out(static_cast<std::size_t>(n * axes), 0);
    for (std::int64_t a = 0; a < axes; ++a) {
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t t = tokens[static_cast<std::size_t>(i)];
        if (!multi_) out[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(call.positions[t]);
        else if (a < call.axes) out[static_cast<std::size_t>(a * n + i)] = static_cast<std::int32_t>(call.positions[t * call.axes + a]);
      }
    }
    ggml_backend_tensor_set(into, out.data(), 0, out.size() * sizeof(std::int32_t));
  };
  std::vector<std::int64_t> every(static_cast<std::size_t>(call.tokens)), valid;
  for (std::int64_t t = 0; t < call.tokens; ++t) {
    every[static_cast<std::size_t>(t)] = t;
    if (call.slots[t] >= 0) valid.push_back(t);
  }
  positions_of(every, positions_);
  if (valid.empty()) return;
  positions_of(valid, valid_positions_);
  std::vector<std::int32_t> gather(valid.begin(), valid.end());
  ggml_backend_tensor_set(valid_tokens_, gather.data(), 0, gather.size() * sizeof(std::int32_t));
  std::vector<std::int64_t> rows;
  for (std::int64_t t : valid) {
    const std::int64_t slot = call.slots[t];
    if (c.layout != ROPECHECK_CACHE_HND) {
      rows.push_back(slot);
      continue;
    }
    const std::int64_t block = slot / c.block_size, offset = slot % c.block_size;
    for (std::int64_t h = 0; h < c.kv_heads; ++h) rows.push_back((block * c.kv_heads + h) * c.block_size + offset);
  }
  ggml_backend_tensor_set(rows_, rows.data(), 0, rows.size() * sizeof(std::int64_t));
}

bool RopeCacheGraph::compute(ggml_backend_t backend, const ropecheck_plugin_cache_call& call) {
  write_inputs(call);
  return ggml_backend_graph_compute(backend, graph_) == GGML_STATUS_SUCCESS;
}

}  // namespace ropecheck_ggml_peer
