// The messages between ropecheck (the host, plugin_host.cc) and its plugin worker child
// (plugin_worker.cc) over a SOCK_SEQPACKET socket pair: one LoadReport when the worker starts,
// then one CallMessage -> one ReplyMessage per apply. The data (q, k, positions) never travels in
// messages: it lies in a shared memory file between guard bytes (plugin_guarded_buffers.h).
// Plain structs, same binary on both sides (the worker is a fork of the host).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ropecheck/attention_plugin.h"
#include "ropecheck/plugin.h"

namespace ropecheck::plugin_protocol {

// How far the worker got loading the library; everything after `loaded` is the parent's to judge.
enum class LoadStage : std::uint32_t {
  loaded,         // entry called, ABI version 1 to 6 read, initialised, capabilities queried
  dlopen_failed,  // detail: dlerror()
  no_entry,       // the library has no ROPECHECK_PLUGIN_ENTRY_SYMBOL
  null_entry,     // the entry function returned NULL
  wrong_abi,      // abi_version is not 1 to 6 (abi_version holds it)
  bad_struct,     // struct_size too small, or a required function NULL
  init_failed,    // ABI 2 init returned non-OK (detail: the status and its description)
  query_failed,   // query_capabilities returned non-OK (detail: the status)
  // An attention plugin (attention_plugin.h): entry, init, query_capabilities and teardown all
  // went well in the worker, which then exits: the host loads it into its own process.
  attention_loaded,
};

// The smallest struct_size accepted: every field through apply_bf16. apply_fp16 took the place of
// the first reserved pointer within ABI 1, so a struct_size that ends before it is still a valid
// version 1 struct (without fp16), and the worker reads apply_fp16 only when struct_size covers it.
inline constexpr std::size_t kMinStructSize = offsetof(ropecheck_plugin_v1, apply_fp16);
// ABI 2 to 6 (one layout): every field before the reserved pointers (ABI 4's optional
// apply_backward is where v2 has its first, ABI 5's apply_rope_cache and its capabilities query
// where v4 has its first two, ABI 6's forms where v5 has its last).
inline constexpr std::size_t kMinStructSizeV2 = offsetof(ropecheck_plugin_v2, reserved);
// The spec an ABI 2 plugin was built with ends where ABI 3 appended axis_mode: its struct_size.
inline constexpr std::size_t kSpecSizeV2 = offsetof(ropecheck_plugin_spec, axis_mode);

inline constexpr std::size_t kMaxNameBytes = 64;
inline constexpr std::size_t kMaxSummaryBytes = 400;
inline constexpr std::size_t kMaxDetailBytes = 400;
inline constexpr std::size_t kMaxDescriptionBytes = 200;  // what an ABI 2 init says it chose

struct LoadReport {
  LoadStage stage = LoadStage::loaded;
  std::uint32_t abi_version = 0;
  std::uint32_t struct_size = 0;
  std::uint32_t has_apply_f32 = 0;
  std::uint32_t has_apply_bf16 = 0;
  std::uint32_t has_apply_fp16 = 0;
  std::uint32_t has_apply_backward = 0;  // ABI 4's optional backward entry
  // ABI 5's optional fused entry (with its capabilities query: a struct with one and not the
  // other is bad_struct), and what that query filled.
  std::uint32_t has_apply_rope_cache = 0;
  ropecheck_plugin_cache_capabilities cache_caps{};
  // ABI 6's optional forms entry (both its functions set, else bad_struct), and what its query
  // filled.
  std::uint32_t has_apply_rope_form = 0;
  ropecheck_plugin_form_capabilities form_caps{};
  std::uint32_t name_truncated = 0;  // the name ran past kMaxNameBytes (refused by the host)
  std::uint32_t attention = 0;       // the library exports the attention entry, not the RoPE one
  ropecheck_plugin_capabilities caps{};
  ropecheck_attention_capabilities attention_caps{};
  char name[kMaxNameBytes + 1] = {};
  char summary[kMaxSummaryBytes + 1] = {};
  char detail[kMaxDetailBytes + 1] = {};
  char description[kMaxDescriptionBytes + 1] = {};
};

// What `bench` hands the worker to time a plugin where it runs (timed calls, below): a function of
// the host's, the same-run probe, whose address is valid in the worker because the worker is a
// fork of the host (same binary, same mapping). It walks q and k as RoPE does, in place.
using WorkerProbe = void (*)(float* q, std::size_t q_floats, float* k, std::size_t k_floats,
                             std::int64_t tokens);

// The fused call's part of a CallMessage (ABI 5, apply_rope_cache): the cache as the ABI carries
// it (its scale pointers NULL: the worker points them into its mapping) and where v, the slots,
// the two caches and the scales (k's, then v's) lie in the shared memory file. q, k and positions
// are the CallMessage's own.
struct CacheCallMessage {
  ropecheck_plugin_cache cache{};
  std::uint64_t v_offset = 0;
  std::uint64_t slots_offset = 0;
  std::uint64_t k_cache_offset = 0;
  std::uint64_t v_cache_offset = 0;  // meaningless for mla (v_cache NULL)
  std::uint64_t scales_offset = 0;   // k_scale_count floats, then v_scale_count
};

// The form call's part of a CallMessage (ABI 6, apply_rope_form): the views, the norm as the ABI
// carries it (its weight pointers NULL: the worker points them into its mapping) and where the
// buffer, the cos/sin cache and the weights (q's, then k's) lie in the shared memory file. The
// dtype, spec, tokens, threads and positions are the CallMessage's own.
struct FormCallMessage {
  ropecheck_plugin_head_view q{};
  ropecheck_plugin_head_view k{};  // heads 0: no k (call->k NULL)
  std::int64_t elements = 0;
  std::int32_t angle_source = ROPECHECK_ANGLE_SOURCE_SPEC;
  std::uint32_t has_norm = 0;  // else call->norm NULL
  ropecheck_plugin_qk_norm norm{};
  std::int64_t cache_rows = 0;
  std::uint64_t buffer_offset = 0;
  std::uint64_t cache_offset = 0;    // meaningless without a cache (call->cos_sin_cache NULL)
  std::uint64_t weights_offset = 0;  // head_dim floats of q's weight, then k's when k is there
};

// One apply: the spec and shape, and where q, k, positions and a LongRoPE spec's factor arrays
// (short_factor, then long_factor, rotary_dim/2 doubles each) lie in the shared memory file. The
// spec's pointers are NULL here: the worker points them into its own mapping.
struct CallMessage {
  std::uint32_t dtype = ROPECHECK_DTYPE_FP32;  // one of ROPECHECK_DTYPE_*
  std::int32_t threads = 1;                    // ABI 2's call->threads
  // Positions per token (axis_count(spec)): positions holds tokens * axes int64s, token-major.
  // An ABI 3 plugin gets it as call->axes; ABI 1 and 2 plugins only ever see 1 (never told).
  std::int32_t axes = 1;
  // The backward pass (spec.h, Pass): apply_backward instead of apply. Sent only to a plugin
  // whose LoadReport has it.
  std::uint32_t backward = 0;
  ropecheck_plugin_spec spec{};
  std::int64_t tokens = 0;
  std::int64_t q_heads = 0;
  std::int64_t k_heads = 0;
  std::uint64_t file_bytes = 0;  // the file's size now: the worker remaps when it grew
  std::uint64_t q_offset = 0;
  std::uint64_t k_offset = 0;
  std::uint64_t positions_offset = 0;
  std::uint64_t factors_offset = 0;
  std::uint64_t factors_count = 0;  // 0, or rotary_dim/2 (each array)
  // A timed call (bench): the worker times the apply on its clock and then runs `probe` over the
  // same q and k bytes for at least a quarter of that time (as bench/same_run_limit.h
  // interleaves the probe), and replies with both. nullptr: an ordinary call. A timed call works
  // on the worker's private copies of the q and k that the stage numbered `stage` put in the
  // file (made on its first timed call): memory placed as the built-ins' buffers are.
  WorkerProbe probe = nullptr;
  std::uint64_t stage = 0;
  // ABI 5's fused call: apply_rope_cache on `cache` instead of apply (dtype fp32, k_heads the
  // cache's kv_heads). Sent only to a plugin whose LoadReport has it; never timed.
  std::uint32_t rope_cache = 0;
  CacheCallMessage cache;
  // ABI 6's form call: apply_rope_form on `form` instead of apply. Sent only to a plugin whose
  // LoadReport has it; never timed.
  std::uint32_t rope_form = 0;
  FormCallMessage form;
};

struct ReplyMessage {
  std::int32_t status = ROPECHECK_PLUGIN_ERROR;  // what apply_* returned
  // A timed call's measurements, in the worker: this thread's CPU time where the plugin ran on
  // one thread (the built-ins' clock), the wall clock where it was told more.
  double apply_seconds = 0;
  double probe_seconds = 0;
  std::int64_t probe_passes = 0;
};

}  // namespace ropecheck::plugin_protocol
