// Errors ropecheck reports to its callers. InvalidInput is bad input (a spec, a tensor, a
// position, a file): the CLI turns it into a message and exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace ropecheck {

class InvalidInput : public std::invalid_argument {
 public:
  explicit InvalidInput(const std::string& what) : std::invalid_argument(what) {}
};

// An implementation declined a case its capability record admits (a plugin returning
// ROPECHECK_PLUGIN_UNSUPPORTED): neither a pass nor a failure. check_property() discards the
// case and reports the property SKIPPED with this message.
class UnsupportedCase : public std::runtime_error {
 public:
  explicit UnsupportedCase(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ropecheck
