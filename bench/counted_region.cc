// The counted region's process-wide state (counted_region.h).
#include "bench/counted_region.h"

#include <valgrind/valgrind.h>

namespace ropecheck::bench {
namespace {

int g_counted_calls = 0;
bool g_counted = false;

}  // namespace

void set_counted_calls(int calls) {
  g_counted_calls = calls;
  g_counted = false;
}

int counted_calls() { return g_counted_calls; }

bool running_on_valgrind() { return RUNNING_ON_VALGRIND != 0; }

bool first_counted_entry() {
  const bool first = !g_counted;
  g_counted = true;
  return first;
}

}  // namespace ropecheck::bench
