// The files and manifest entry of one fused golden case (rope_cache_golden_cases.h), written by
// `ropecheck vectors` beside the RoPE cases.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "vectors/rope_cache_golden_cases.h"

namespace ropecheck {

// The cache before the call: a deterministic pseudo-random pattern in the storage (values in
// [-128, 128), never a zero), so that a write where none belongs shows as changed bits and a
// write of zeros cannot pass for an untouched element. cache_elements * element_bytes bytes.
std::vector<std::byte> initial_cache(const GoldenRopeCacheCase& c, const char* which);

// Writes DIR/<case>/ (inputs, positions, slots, theta, the initial caches, the oracle's q and
// cache rows in float64 and the caches as the storage's bytes after the call) and returns the
// case's manifest entry; adds the bytes written to `bytes`.
nlohmann::ordered_json write_rope_cache_case(const GoldenRopeCacheCase& c, const std::filesystem::path& out_dir,
                                             std::uintmax_t& bytes);

}  // namespace ropecheck
