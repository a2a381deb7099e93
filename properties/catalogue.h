// The property families that make up property_catalogue(), one file each: a property is one
// function and one line in its family's list, in the family's file; a new family is one file, its
// declaration here and one line in catalogue.cc.
#pragma once

#include <span>

#include "properties/property.h"

namespace ropecheck {

// RoPE, one family per file:
std::span<const Property> pointwise_properties();              // pointwise_properties.cc
std::span<const Property> boundary_properties();               // boundary_shapes_property.cc
std::span<const Property> nonfinite_properties();              // nonfinite_property.cc
std::span<const Property> call_history_properties();           // call_history_property.cc
std::span<const Property> group_properties();                  // group_properties.cc
std::span<const Property> layout_equivalence_properties();     // layout_equivalence_property.cc
std::span<const Property> scaling_properties();                // scaling_properties.cc
std::span<const Property> long_range_decay_properties();       // long_range_decay_property.cc
std::span<const Property> multi_axis_properties();             // multi_axis_properties.cc
std::span<const Property> backward_properties();               // backward_properties.cc
// The other encodings and attention:
std::span<const Property> sinusoidal_properties();  // sinusoidal_properties.cc
std::span<const Property> attention_properties();   // attention_properties.cc
std::span<const Property> multi_head_properties();  // multi_head_properties.cc
// The fused call that writes the paged KV cache:
std::span<const Property> rope_cache_properties();  // rope_cache_properties.cc
// RoPE in the engines' call forms, QK-norm before it:
std::span<const Property> rope_form_properties();  // rope_form_properties.cc

}  // namespace ropecheck
