// The one list of implementations (impls/registry.inc). Properties, benchmarks, `ropecheck list`,
// vectors and reports all enumerate it; adding an implementation is one file and one line there.
// Mutants (deliberately wrong implementations) are listed apart so normal runs never see them.
#pragma once

#include <span>
#include <string_view>

#include "impls/sinusoidal/absolute_encoding.h"
#include "impls/attention/attention_impl.h"
#include "impls/fused/rope_cache_impl.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/rope_impl.h"

namespace ropecheck {

std::span<const RopeImpl* const> rope_implementations();  // the oracle first
std::span<const RopeImpl* const> rope_mutants();
const RopeImpl& rope_oracle();

std::span<const SinusoidalImpl* const> sinusoidal_implementations();
std::span<const SinusoidalImpl* const> sinusoidal_mutants();

std::span<const AttentionImpl* const> attention_implementations();
std::span<const AttentionImpl* const> attention_mutants();

// The fused call that writes the paged KV cache (impls/fused/rope_cache_impl.h).
std::span<const RopeCacheImpl* const> rope_cache_implementations();
std::span<const RopeCacheImpl* const> rope_cache_mutants();

// RoPE in the engines' call forms, QK-norm before it (impls/fused/rope_form_impl.h).
std::span<const RopeFormImpl* const> rope_form_implementations();
std::span<const RopeFormImpl* const> rope_form_mutants();

// Searches implementations and mutants; nullptr when no id matches.
const RopeImpl* find_rope(std::string_view id);
const SinusoidalImpl* find_sinusoidal(std::string_view id);
const AttentionImpl* find_attention(std::string_view id);
const RopeCacheImpl* find_rope_cache(std::string_view id);
const RopeFormImpl* find_rope_form(std::string_view id);

}  // namespace ropecheck
