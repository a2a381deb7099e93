// The property families that make up property_catalogue(), one file each.
#pragma once

#include <span>

#include "properties/property.h"

namespace ropecheck {

std::span<const Property> rope_properties();        // rope_properties.cc
std::span<const Property> sinusoidal_properties();  // sinusoidal_properties.cc
std::span<const Property> attention_properties();   // attention_properties.cc
std::span<const Property> multi_head_properties();  // multi_head_properties.cc

}  // namespace ropecheck
