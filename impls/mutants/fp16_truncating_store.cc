// mutant/fp16_truncating_store: an fp16 kernel whose float-to-half conversion is the "fast" bit
// shift found in hand-written ports: the exponent rebiased and the mantissa shifted right by 13,
// so every result is truncated towards zero (up to a whole fp16 ulp, twice the rounding the
// bound allows), and anything under 2^-14 is flushed to zero instead of becoming a subnormal.
#include <cstring>
#include <memory>

#include "impls/mutants/pairwise_mutant.h"
#include "core/storage.h"

namespace ropecheck {
namespace {

Fp16 truncating_fp16_from_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude < 0x38800000u) return {sign};  // BUG: subnormals flushed
  return {static_cast<std::uint16_t>(sign | ((magnitude >> 13) - (112u << 10)))};  // BUG: truncated
}

class Fp16TruncatingStore final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/fp16_truncating_store"; }
  std::string_view summary() const override {
    return "fp16 storage whose float-to-half conversion truncates (a bit shift) and flushes "
           "subnormals";
  }

 protected:
  StorageType storage() const override { return StorageType::fp16; }
  float stored(float y) const override { return float_from_fp16(truncating_fp16_from_float(y)); }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_fp16_truncating_store() { return std::make_unique<Fp16TruncatingStore>(); }

}  // namespace ropecheck
