// OpenBLAS's core beside the kernels' ISA level (blas_core.h).
#include "core/blas_core.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace ropecheck {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

template <std::size_t N>
bool one_of(std::string_view name, const std::array<std::string_view, N>& names) {
  return std::any_of(names.begin(), names.end(), [&](std::string_view n) { return same_name(name, n); });
}

constexpr std::array<std::string_view, 2> kAvx2Cores = {"Haswell", "Zen"};
constexpr std::array<std::string_view, 3> kAvx512Cores = {"SkylakeX", "Cooperlake", "SapphireRapids"};

}  // namespace

std::optional<std::string> blas_core_for(Isa level, std::string_view detected) {
  switch (level) {
    case Isa::avx2:
      if (one_of(detected, kAvx2Cores)) return std::nullopt;
      return "Haswell";
    case Isa::avx512:
      if (one_of(detected, kAvx512Cores) || one_of(detected, kAvx2Cores)) return std::nullopt;
      return "SkylakeX";
    default:  // scalar; aarch64's levels: OpenBLAS's own choice (its cores are per CPU model, not per level)
      break;
  }
  return std::nullopt;
}

}  // namespace ropecheck
