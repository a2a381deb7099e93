// ROPECHECK_BENCH_SLOWDOWN (see slowdown.h).
#include "bench/slowdown.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/errors.h"

namespace ropecheck::bench {

double slowdown_percent(std::string_view id) {
  const char* text = std::getenv("ROPECHECK_BENCH_SLOWDOWN");
  if (text == nullptr || *text == '\0') return 0;
  const std::string_view setting(text);
  const auto equals = setting.rfind('=');
  double percent = 0;
  try {
    if (equals == std::string_view::npos) throw std::invalid_argument("no '='");
    std::size_t used = 0;
    const std::string number(setting.substr(equals + 1));
    percent = std::stod(number, &used);
    if (used != number.size() || !(percent >= 0 && percent <= 1000)) throw std::invalid_argument("range");
  } catch (const std::exception&) {
    throw InvalidInput(fmt::format("ROPECHECK_BENCH_SLOWDOWN='{}': expected ID=PERCENT, e.g. "
                                   "kernel/avx512=10, with PERCENT in [0, 1000]", setting));
  }
  return setting.substr(0, equals) == id ? percent : 0;
}

}  // namespace ropecheck::bench
