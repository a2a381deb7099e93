// The registry and the property catalogue as JSON ("schema": "ropecheck.list/1"), for
// `ropecheck list --json` and for anything that wants the ids without parsing a table.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "impls/attention/attention_impl.h"
#include "impls/fused/rope_cache_impl.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/rope_impl.h"

namespace ropecheck {

inline constexpr const char* kListSchemaId = "ropecheck.list/1";

// {"schema", "rope_implementations": [{id, summary, capabilities}], "sinusoidal_implementations":
//  [{id, summary}], "mutants": [{id, kind, summary, capabilities?}], "properties": [{id, kind,
//  description}]}; capabilities = {layouts, angle_precisions, partial_rotary, isa, available,
//  unavailable_reason}.
nlohmann::ordered_json list_json();
// The same with a "plugins" array after "rope_implementations" (list --plugin): each entry as a
// RoPE implementation plus "plugin": {path, abi_version, dtypes, max_head_dim (0: no limit)};
// attention plugins after the registry's "attention_implementations", each with "plugin": {path,
// max_head_dim, description}. Every attention entry says its "kv_storage". Fused cache calls
// ("rope_cache_implementations": {id, kind, summary, available, unavailable_reason, layouts,
// storages, scale_directions, padding}): the registry's, then the plugins' and Python functions'.
// The call forms ("rope_form_implementations": {id, kind, summary, available, unavailable_reason,
// storages, angle_sources, strided, k_optional, plain_calls, norm_weights, norm_precision, "" without
// a norm}): the registry's, then the ABI 6 plugins' (whose "plugin" entry holds the same as
// "rope_form").
nlohmann::ordered_json list_json(const std::vector<const RopeImpl*>& plugins,
                                 const std::vector<const AttentionImpl*>& attention_plugins = {},
                                 const std::vector<const RopeCacheImpl*>& rope_cache_plugins = {},
                                 const std::vector<const RopeFormImpl*>& rope_form_plugins = {});

}  // namespace ropecheck
