// The build's kernel levels by role, for tests that need "a level above scalar" or "the widest
// level" whatever the architecture: x86-64 avx2 and avx512, aarch64 neon and sve (core/isa.h).
#pragma once

#include <string>

#include "core/isa.h"

namespace ropecheck::test {

// The first SIMD level (avx2, neon); scalar where the build has none.
inline Isa first_simd_level() { return built_levels().size() > 1 ? built_levels()[1] : Isa::scalar; }

// The widest level (avx512, sve).
inline Isa widest_level() { return built_levels().back(); }

inline std::string level_name(Isa isa) { return std::string(to_string(isa)); }

}  // namespace ropecheck::test
