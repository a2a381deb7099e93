// PLACEHOLDER: replaced by its owner; links the registry meanwhile.
#include <memory>
#include <stdexcept>
#include "ropecheck/registry.h"
namespace ropecheck {
namespace {
class Placeholder final : public RopeImpl {
 public:
  std::string_view id() const override { return "rotation_matrix/scalar"; }
  std::string_view summary() const override { return "placeholder"; }
  RopeCapabilities capabilities() const override {
    return {{Layout::interleaved, Layout::half_split}, {AnglePrecision::fp32, AnglePrecision::fp64}, true, "scalar", true, ""};
  }
 protected:
  void rotate(const RopeSpec&, HeadTensor, PositionIds) const override { throw std::logic_error("placeholder"); }
};
}  // namespace
std::unique_ptr<RopeImpl> make_rotation_matrix_scalar() { return std::make_unique<Placeholder>(); }
}  // namespace ropecheck
