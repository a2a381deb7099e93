// One gtest per (implementation, property) of a catalogue: the parameter, how gtest prints it and
// its test name "<impl>__<property>" (ctest -R '<impl>__<property>' selects one). Shared by the
// RoPE, sinusoidal and attention catalogue tests.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "properties/property.h"
#include "tests/support/test_config.h"

namespace ropecheck {

template <class Impl>
struct PropertyCase {
  const Impl* impl;
  const Property* property;
};

template <class Impl>
void PrintTo(const PropertyCase<Impl>& c, std::ostream* os) {
  *os << c.impl->id() << " x " << c.property->id;
}

template <class Impl>
std::string property_case_name(const ::testing::TestParamInfo<PropertyCase<Impl>>& info) {
  return test_name(std::string(info.param.impl->id())) + "__" + std::string(info.param.property->id);
}

}  // namespace ropecheck
