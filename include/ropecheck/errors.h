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

}  // namespace ropecheck
