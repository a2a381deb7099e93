// `ropecheck vectors --out DIR`: golden vectors from the float64 oracle for porters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>


namespace ropecheck {

// `ropecheck vectors --out DIR`: golden vectors from the float64 oracle for porters.
struct VectorsOptions {
  std::filesystem::path out_dir;  // required; created; refused when it exists as a non-directory
};

// Writes one directory of .npy files per golden case (golden_cases.cc) and DIR/manifest.json,
// prints the summary (cases, bytes, where) to `out`. Returns kExitOk; throws InvalidInput when
// out_dir is missing, exists and is not a directory, or cannot be written.
int run_vectors(const VectorsOptions& options, std::ostream& out);

}  // namespace ropecheck
