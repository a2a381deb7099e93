// Level detection: cpuid on x86-64 (GCC's __builtin_cpu_supports reads cpuid and XCR0 once), the
// kernel's hardware capabilities on aarch64 (getauxval: what the CPU has and the OS enabled).
#include "core/isa.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#if defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

#include "core/errors.h"

namespace ropecheck {

namespace {

constexpr Isa kAllLevels[] = {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon, Isa::sve};
#if defined(__x86_64__)
constexpr Isa kBuiltLevels[] = {Isa::scalar, Isa::avx2, Isa::avx512};
constexpr const char* kArchitecture = "x86-64";
#elif defined(__aarch64__)
constexpr Isa kBuiltLevels[] = {Isa::scalar, Isa::neon, Isa::sve};
constexpr const char* kArchitecture = "aarch64";
#else
constexpr Isa kBuiltLevels[] = {Isa::scalar};
constexpr const char* kArchitecture = "this architecture";
#endif

int rank_of(Isa isa) {  // position in kBuiltLevels; -1 when not built here
  const auto* at = std::find(std::begin(kBuiltLevels), std::end(kBuiltLevels), isa);
  return at == std::end(kBuiltLevels) ? -1 : static_cast<int>(at - std::begin(kBuiltLevels));
}

// ROPECHECK_ISA also caps the levels: run as if the CPU had nothing above it, so that the whole
// suite can be run as on a machine without the wider levels. An unknown value caps nothing here;
// dispatched_isa() (and the CLI at start) reject it with a message.
bool above_cap(Isa isa, std::string* why) {
  const char* cap_text = std::getenv("ROPECHECK_ISA");
  if (cap_text == nullptr || *cap_text == '\0') return false;
  for (Isa cap : kBuiltLevels) {
    if (to_string(cap) == cap_text && rank_of(isa) > rank_of(cap)) {
      if (why != nullptr) *why = fmt::format("capped by ROPECHECK_ISA={}", cap_text);
      return true;
    }
  }
  return false;
}

bool missing(const char* what, std::string* why) {
  if (why != nullptr) *why = fmt::format("this CPU lacks {}", what);
  return false;
}

#if defined(__x86_64__)
bool cpu_has(Isa isa, std::string* why) {
  switch (isa) {
    case Isa::avx2:
      if (!__builtin_cpu_supports("avx2")) return missing("AVX2", why);
      if (!__builtin_cpu_supports("fma")) return missing("FMA", why);
      if (!__builtin_cpu_supports("f16c")) return missing("F16C", why);
      return true;
    case Isa::avx512:
      if (!__builtin_cpu_supports("avx512f")) return missing("AVX-512F", why);
      if (!__builtin_cpu_supports("avx512dq")) return missing("AVX-512DQ", why);
      if (!__builtin_cpu_supports("avx512vl")) return missing("AVX-512VL", why);
      if (!__builtin_cpu_supports("avx512bw")) return missing("AVX-512BW", why);
      return true;
    default:
      return true;
  }
}
#elif defined(__aarch64__)
bool cpu_has(Isa isa, std::string* why) {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  switch (isa) {
    case Isa::neon:
      if ((hwcap & HWCAP_ASIMD) == 0) return missing("Advanced SIMD (NEON)", why);
      return true;
    case Isa::sve:
      if ((hwcap & HWCAP_SVE) == 0) return missing("SVE", why);
      return true;
    default:
      return true;
  }
}
#else
bool cpu_has(Isa, std::string*) { return true; }
#endif

}  // namespace

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::neon: return "neon";
    case Isa::sve: return "sve";
  }
  return "?";
}

Isa parse_isa(std::string_view text) {
  for (Isa isa : kAllLevels) {
    if (text == to_string(isa)) return isa;
  }
  throw InvalidInput(fmt::format("unknown ISA level '{}' (scalar, avx2, avx512, neon, sve)", text));
}

std::span<const Isa> built_levels() { return kBuiltLevels; }

bool built_here(Isa isa) { return rank_of(isa) >= 0; }

bool cpu_supports(Isa isa, std::string* why) {
  if (!built_here(isa)) {
    if (why != nullptr) *why = fmt::format("not built for {} (a level of another architecture)", kArchitecture);
    return false;
  }
  if (above_cap(isa, why)) return false;
  return cpu_has(isa, why);
}

bool cpu_supports_avx512_bf16(std::string* why) {
  if (!cpu_supports(Isa::avx512, why)) return false;
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512bf16")) return missing("AVX512_BF16", why);
#endif
  return true;
}

int sve_vector_bits() {
#if defined(__aarch64__)
  if ((getauxval(AT_HWCAP) & HWCAP_SVE) == 0) return 0;
  const int vl = prctl(PR_SVE_GET_VL);  // bytes, with flags in the high bits
  return vl < 0 ? 0 : (vl & PR_SVE_VL_LEN_MASK) * 8;
#else
  return 0;
#endif
}

Isa dispatched_isa() {
  if (const char* forced = std::getenv("ROPECHECK_ISA"); forced != nullptr && *forced != '\0') {
    const Isa isa = parse_isa(forced);
    std::string why;
    if (!cpu_supports(isa, &why)) {
      throw InvalidInput(fmt::format("ROPECHECK_ISA={}: {}", forced, why));
    }
    return isa;
  }
  for (int i = static_cast<int>(std::size(kBuiltLevels)) - 1; i > 0; --i) {
    if (cpu_supports(kBuiltLevels[i])) return kBuiltLevels[i];
  }
  return Isa::scalar;
}

}  // namespace ropecheck
