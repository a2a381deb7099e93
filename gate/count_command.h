// `ropecheck count`: this binary's cases counted under Valgrind's callgrind (instructions,
// simulated cache misses, estimated cycles per call), a table and DIR/counted.json, which
// `compare`, `report` and `history add` read. By default the cases a counted gate counts.
//   ropecheck count --out reports/out/count
//   ropecheck count --filter '^kernel/avx2/llama7b_decode' --calls 50
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

namespace ropecheck {

struct CountOptions {
  std::string filter;  // empty: the counted gate's default cases (gated_cases.h)
  int calls = 5;       // collected per case, after one that warms the simulated caches
  int jobs = 0;        // processes at a time; 0: every CPU this process may use
  std::filesystem::path out_dir = "reports/out/count";
};

// Exit 0 counted; InvalidInput (exit 2) without Valgrind, for bad options, no case, or a case
// whose process failed.
int run_count(const CountOptions& options, std::ostream& out);

}  // namespace ropecheck
