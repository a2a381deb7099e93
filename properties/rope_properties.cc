// PLACEHOLDER
#include "catalogue.h"
namespace ropecheck {
std::span<const Property> rope_properties() { return {}; }
}  // namespace ropecheck
