// PLACEHOLDER: replaced by its owner; links the registry meanwhile.
#include <memory>
#include <stdexcept>
#include "ropecheck/registry.h"
namespace ropecheck {
namespace {
class Placeholder final : public SinusoidalImpl {
 public:
  std::string_view id() const override { return "sinusoidal/formula"; }
  std::string_view summary() const override { return "placeholder"; }
 protected:
  void compute(const SinusoidalSpec&, std::span<const std::int64_t>, std::span<float>) const override { throw std::logic_error("placeholder"); }
};
}  // namespace
std::unique_ptr<SinusoidalImpl> make_sinusoidal_formula() { return std::make_unique<Placeholder>(); }
}  // namespace ropecheck
