// PLACEHOLDER: replaced by its owner.
#include "ropecheck/absolute_encoding.h"
#include <stdexcept>
namespace ropecheck {
void validate(const SinusoidalSpec&) {}
void SinusoidalImpl::table(const SinusoidalSpec& spec, std::span<const std::int64_t> positions, std::span<float> out) const { compute(spec, positions, out); }
std::vector<float> SinusoidalImpl::table(const SinusoidalSpec&, std::span<const std::int64_t>) const { throw std::logic_error("placeholder"); }
}  // namespace ropecheck
