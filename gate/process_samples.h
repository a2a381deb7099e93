// The samples `ropecheck compare` tests for one side: the repetitions of one bench.json (the old
// unit, which treats repetitions inside one process as independent: bench/README.md measures why
// they are not), or, for a directory of several runs (e.g. a gate's DIR/base with round-NN/
// bench.json), one sample per process: the median of its repetitions.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include "bench/format/bench_json.h"

namespace ropecheck {

struct BenchSamples {
  std::map<std::string, BenchCase> cases;  // per case, one sample per repetition or per process
  bool per_process = false;
  std::size_t files = 0;
};

// `path`: a bench.json, a directory holding one (repetitions are the samples), or a directory
// whose subdirectories hold several (searched recursively; each file's per-case medians are the
// samples). Throws InvalidInput for no bench.json, a malformed one, or a case with fewer than
// `min_samples` samples.
BenchSamples read_bench_samples(const std::filesystem::path& path, std::size_t min_samples);

}  // namespace ropecheck
