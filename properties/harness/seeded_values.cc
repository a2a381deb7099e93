// seeded_floats() (model_shape_cases.h): a model shape's tensor values from a seed.
// Compiled apart from the rest of the room (properties/CMakeLists.txt): the fill is a counter-based
// hash per element, which vectorises with 64-bit multiplies where the CPU has them, so it is
// cloned per ISA level (chosen at load time) and vectorised under the dynamic cost model that
// -O2's default rules out for it. Integer arithmetic only: every clone writes the same bits.
// 3.5 ns an element scalar, 0.7 with AVX-512 (a model shape's case fills tens of millions).
#include <bit>
#include <cstdint>
#include <vector>

#include "properties/harness/model_shape_cases.h"

namespace ropecheck {
namespace {

// splitmix64's finaliser: a well-mixed 64-bit value from a counter, so that any element's value
// depends on the seed and its index alone.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#if defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void fill(float* x, std::size_t count, std::uint64_t key, int lo, std::uint64_t span) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t r = mix(key ^ (i * 0x9e3779b97f4a7c15ull));
    // Separate bits for each choice, ranges by multiply-shift rather than division: bits 0-15
    // zero or not, 16-38 the fraction, 39-62 the exponent, 63 the sign.
    const auto sign = static_cast<std::uint32_t>(r >> 63) << 31;
    // The float's fields directly: every exponent drawn is a normal one (fp32's bias 127).
    const auto fraction = static_cast<std::uint32_t>(r >> 16) & 0x7fffffu;
    const auto exponent = static_cast<std::uint32_t>(
        lo + static_cast<int>((((r >> 39) & 0xffffffu) * span) >> 24) + 127);
    // finite_float(): 1 in 14 each of +0 and -0, selected without a branch.
    const bool zero = (((r & 0xffffu) * 14) >> 16) < 2;
    const std::uint32_t magnitude = zero ? 0u : (exponent << 23 | fraction);
    x[i] = std::bit_cast<float>(sign | magnitude);
  }
}

}  // namespace

std::vector<float> seeded_floats(std::size_t count, int min_exponent, int max_exponent, ValuesSeed seed) {
  std::vector<float> x(count);
  fill(x.data(), count, mix(seed.seed + 0x9e3779b97f4a7c15ull), min_exponent,
       static_cast<std::uint64_t>(max_exponent - min_exponent + 1));
  return x;
}

}  // namespace ropecheck
