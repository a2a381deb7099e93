// cpuid-based level detection (GCC's __builtin_cpu_supports reads cpuid and XCR0 once).
#include "core/isa.h"

#include <fmt/format.h>

#include <cstdlib>

#include "core/errors.h"

namespace ropecheck {

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

Isa parse_isa(std::string_view text) {
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (text == to_string(isa)) return isa;
  }
  throw InvalidInput(fmt::format("unknown ISA level '{}' (scalar, avx2, avx512)", text));
}

namespace {

// ROPECHECK_ISA also caps the levels: run as if the CPU had nothing above it, so that the whole
// suite can be run as on a machine without AVX-512 or AVX2. An unknown value caps nothing here;
// dispatched_isa() (and the CLI at start) reject it with a message.
bool above_cap(Isa isa, std::string* why) {
  const char* cap_text = std::getenv("ROPECHECK_ISA");
  if (cap_text == nullptr || *cap_text == '\0') return false;
  for (Isa cap : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (to_string(cap) == cap_text && static_cast<int>(isa) > static_cast<int>(cap)) {
      if (why != nullptr) *why = fmt::format("capped by ROPECHECK_ISA={}", cap_text);
      return true;
    }
  }
  return false;
}

}  // namespace

bool cpu_supports(Isa isa, std::string* why) {
  const auto missing = [&](const char* what) {
    if (why != nullptr) *why = fmt::format("this CPU lacks {}", what);
    return false;
  };
  if (above_cap(isa, why)) return false;
  switch (isa) {
    case Isa::scalar:
      return true;
    case Isa::avx2:
      if (!__builtin_cpu_supports("avx2")) return missing("AVX2");
      if (!__builtin_cpu_supports("fma")) return missing("FMA");
      if (!__builtin_cpu_supports("f16c")) return missing("F16C");
      return true;
    case Isa::avx512:
      if (!__builtin_cpu_supports("avx512f")) return missing("AVX-512F");
      if (!__builtin_cpu_supports("avx512dq")) return missing("AVX-512DQ");
      if (!__builtin_cpu_supports("avx512vl")) return missing("AVX-512VL");
      if (!__builtin_cpu_supports("avx512bw")) return missing("AVX-512BW");
      return true;
  }
  return false;
}

bool cpu_supports_avx512_bf16(std::string* why) {
  if (!cpu_supports(Isa::avx512, why)) return false;
  if (!__builtin_cpu_supports("avx512bf16")) {
    if (why != nullptr) *why = "this CPU lacks AVX512_BF16";
    return false;
  }
  return true;
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
  for (Isa isa : {Isa::avx512, Isa::avx2}) {
    if (cpu_supports(isa)) return isa;
  }
  return Isa::scalar;
}

}  // namespace ropecheck
