// cpuid-based level detection (GCC's __builtin_cpu_supports reads cpuid and XCR0 once).
#include "ropecheck/isa.h"

#include <fmt/format.h>

#include <cstdlib>

#include "ropecheck/errors.h"

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

bool cpu_supports(Isa isa, std::string* why) {
  const auto missing = [&](const char* what) {
    if (why != nullptr) *why = fmt::format("this CPU lacks {}", what);
    return false;
  };
  switch (isa) {
    case Isa::scalar:
      return true;
    case Isa::avx2:
      if (!__builtin_cpu_supports("avx2")) return missing("AVX2");
      if (!__builtin_cpu_supports("fma")) return missing("FMA");
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
