// Branch-free whole-tensor conversions (storage_convert.h). Compiled apart (core/CMakeLists.txt):
// each loop is cloned per ISA level, chosen when the library loads (x86-64-v4 with AVX-512,
// v3 with AVX2, the baseline), and vectorised under the dynamic cost model that -O2's default
// rules out for them. Integer selects and exact float operations only (in the default rounding
// mode, which nothing here changes), so every clone gives
// storage.h's bits: checked for every float and every half once (2^32 and 2^16 values), and on
// a sample of each rounding boundary by tests/core/storage_convert_test.cc.
#include "core/storage_convert.h"

#include <bit>
#include <stdexcept>

namespace ropecheck {
namespace {

#if defined(__x86_64__)
#define ROPECHECK_CLONED __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ROPECHECK_CLONED  // aarch64: NEON is the baseline, and GCC 12 clones for x86 only
#endif

// Selects as masks, not ?: on values, in functions marked inline: GCC 12 turned the ?: forms back
// into branches and left widen_fp16 and round_fp16 scalar loops (narrow_fp16 too in the baseline
// clone), a third of a 16-bit kernel's property tests; written so, every loop below is vectorised
// in every clone (-fopt-info-vec).
// All ones where `condition` holds.
std::uint32_t mask(bool condition) { return 0u - static_cast<std::uint32_t>(condition); }
// `a` where `m` is all ones, `b` where it is zero.
std::uint32_t pick(std::uint32_t m, std::uint32_t a, std::uint32_t b) { return (a & m) | (b & ~m); }

inline std::uint16_t fp16_bits_from(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  // NaN: quiet, the top 10 payload bits kept.
  const std::uint32_t nan = 0x7E00u | ((magnitude >> 13) & 0x3FFu);
  // >= 2^-14: 13 mantissa bits dropped, ties to even, exponent rebiased (a carry is right).
  const std::uint32_t lsb = (magnitude >> 13) & 1u;
  const std::uint32_t normal = ((magnitude + 0xFFFu + lsb) >> 13) - ((127u - 15u) << 10);
  // < 2^-14: the value in units of 2^-24 (an exact product), rounded to nearest even by adding
  // and subtracting 2^23 (the float grid is whole numbers there); 2^-25 ties to 0 as it should.
  // (A signed conversion of a value below 2^10: the unsigned one has no vector form before AVX-512.)
  const std::uint32_t small = mask(magnitude < 0x38800000u);
  const float below = std::bit_cast<float>(pick(small, magnitude, 0x38800000u));
  const auto subnormal =
      static_cast<std::uint32_t>(static_cast<std::int32_t>((below * 0x1p24f + 0x1p23f) - 0x1p23f));
  std::uint32_t out = pick(small, subnormal, normal);
  out = pick(mask(magnitude >= 0x477FF000u), 0x7C00u, out);  // >= 65520: Inf
  out = pick(mask(magnitude > 0x7F800000u), nan, out);
  return static_cast<std::uint16_t>(sign | out);
}

inline float float_from_fp16_bits(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1Fu;
  const std::uint32_t mantissa = half & 0x3FFu;
  const std::uint32_t inf_nan = 0x7F800000u | (mantissa << 13);  // payload kept
  const std::uint32_t normal = ((exponent + 127u - 15u) << 23) | (mantissa << 13);
  const auto subnormal =  // exact
      std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<std::int32_t>(mantissa)) * 0x1p-24f);
  std::uint32_t out = pick(mask(exponent != 0), normal, subnormal);
  out = pick(mask(exponent == 0x1Fu), inf_nan, out);
  return std::bit_cast<float>(sign | out);
}

ROPECHECK_CLONED void narrow_fp16(const float* from, Fp16* to, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) to[i].bits = fp16_bits_from(from[i]);
}
ROPECHECK_CLONED void widen_fp16(const Fp16* from, float* to, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) to[i] = float_from_fp16_bits(from[i].bits);
}
ROPECHECK_CLONED void narrow_bf16(const float* from, std::uint16_t* to, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) to[i] = bf16_from_float(from[i]);
}
ROPECHECK_CLONED void widen_bf16(const std::uint16_t* from, float* to, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) to[i] = float_from_bf16(from[i]);
}
ROPECHECK_CLONED void round_fp16(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = float_from_fp16_bits(fp16_bits_from(x[i]));
}
ROPECHECK_CLONED void round_bf16(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = float_from_bf16(bf16_from_float(x[i]));
}

void check_sizes(std::size_t from, std::size_t to) {
  if (from != to) throw std::logic_error("storage conversion: the two tensors differ in size");
}

}  // namespace

void narrow_to_fp16(std::span<const float> from, std::span<Fp16> to) {
  check_sizes(from.size(), to.size());
  narrow_fp16(from.data(), to.data(), from.size());
}
void widen_from_fp16(std::span<const Fp16> from, std::span<float> to) {
  check_sizes(from.size(), to.size());
  widen_fp16(from.data(), to.data(), from.size());
}
void narrow_to_bf16(std::span<const float> from, std::span<std::uint16_t> to) {
  check_sizes(from.size(), to.size());
  narrow_bf16(from.data(), to.data(), from.size());
}
void widen_from_bf16(std::span<const std::uint16_t> from, std::span<float> to) {
  check_sizes(from.size(), to.size());
  widen_bf16(from.data(), to.data(), from.size());
}

void round_to_storage(std::span<float> x, StorageType storage) {
  switch (storage) {
    case StorageType::fp16: return round_fp16(x.data(), x.size());
    case StorageType::bf16: return round_bf16(x.data(), x.size());
    case StorageType::fp32: return;
  }
}

}  // namespace ropecheck
