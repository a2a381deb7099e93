// ROPECHECK_BENCH_SLOWDOWN (see slowdown.h).
#include "bench/slowdown.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "bench/counted_region.h"
#include "core/errors.h"

namespace ropecheck::bench {
namespace {

long g_counted_calls_made = 0;  // since the counted region began
long g_extra_calls_made = 0;

}  // namespace

bool counting() { return counted_calls() > 0; }

void reset_counted_slowdown() {
  g_counted_calls_made = 0;
  g_extra_calls_made = 0;
}

int counted_extra_calls_due(double percent) {
  ++g_counted_calls_made;
  // A whole number reached exactly (50 calls at 2%) must count as reached: hence the 1e-9.
  const auto owed = static_cast<long>(static_cast<double>(g_counted_calls_made) * percent / 100 + 1e-9);
  const long due = owed - g_extra_calls_made;
  g_extra_calls_made = owed;
  return static_cast<int>(due);
}

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
