// The case the gate's end-to-end tests time: the scalar fp32 kernel on a short prefill
// (milliseconds a call; a sub-microsecond decode case can be too noisy under ASan beside other
// tests for a verdict in a few rounds), the first of two whose working set is not on a cache
// boundary of this machine. The gate reports a case there but judges nothing on it
// (cache_boundary.h), so a fixed case would test nothing where GPT-2's 3 MiB of q and k meet a
// 2 MiB L2 (Intel Xeon) and Llama's 16 MiB a 32 MiB L3 (AMD Zen 3 and 4).
#pragma once

#include <string>

#include "gate/cache_boundary.h"

namespace ropecheck::test {

inline std::string gate_case_filter() {
  static const std::string filter = [] {
    const auto caches = read_cpu_caches();
    for (const char* shape : {"gpt2_small_prefill512", "llama7b_prefill512"}) {
      const std::string prefix = std::string("kernel/scalar/") + shape + "/interleaved/";
      const auto bytes = working_set_bytes(prefix + "real_time/threads:1");
      // The forward's case alone: "/backward/" follows the layout in its backward's name.
      if (bytes && cache_boundary_flag(*bytes, caches).empty()) return "^" + prefix + "real_time";
    }
    return std::string("^kernel/scalar/gpt2_small_prefill512/interleaved/real_time");  // both flagged: it says so
  }();
  return filter;
}

}  // namespace ropecheck::test
