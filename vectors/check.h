// `ropecheck check --vectors DIR --outputs OUT`: judges a port that is not a C ABI library (a CUDA,
// Triton or Metal kernel, a Python or Rust port) by its .npy outputs against the golden vectors,
// with the tolerance each case's manifest entry carries.
//   ropecheck vectors --out golden && python3 my_port.py golden out
//   ropecheck check --vectors golden --outputs out
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/spec.h"
#include "vectors/judge.h"

namespace ropecheck {

struct CheckOptions {
  std::filesystem::path vectors_dir;   // written by `ropecheck vectors`
  std::filesystem::path outputs_dir;   // OUT/<case>/q_out.npy, k_out.npy (pe_out.npy; rope_cache:
                                       // q_out.npy, k_cache_out.npy, v_cache_out.npy; rope_form:
                                       // buffer_out.npy)
  AnglePrecision angles = AnglePrecision::fp64;  // how the port forms m * theta_i
  std::string kind = "rope";           // the cases judged: "rope", "sinusoidal", "rope_cache" or
                                       // "rope_form"
  // A case with none of its output files is listed as MISSING but does not fail the run. A case
  // with some of its files and not others fails whatever this says.
  bool only_present = false;
};

enum class CheckVerdict { pass, fail, missing };

struct CaseCheck {
  std::string name;
  std::string dtype;
  CheckVerdict verdict = CheckVerdict::missing;
  WorstError worst;                         // over the case's tensors, when judged
  std::string first_wrong;             // rope_cache, rope_form: the first element over its bound
  std::string call;                    // rope_cache, rope_form: the call (rope_cache_call_text,
                                       // rope_form_call_text)
  std::vector<std::string> missing;    // output files not found, relative to OUT
  bool counted = true;                 // false: MISSING and excused by only_present
};

struct CheckReport {
  std::vector<CaseCheck> cases;  // the manifest's cases of the kind, in its order
  int passed = 0;
  int failed = 0;
  int missing = 0;   // counted MISSING cases
  int excused = 0;   // MISSING cases excused by only_present
  int exit_code() const;  // 0 every counted case passed, else 1
};

// Reads the manifest, then every output file of every case of the kind, and judges them. Throws
// InvalidInput naming the file when a directory is missing, the manifest or an output is
// unreadable or malformed, an output's dtype or shape is not its case's, or no case of the kind
// has any output at all (nothing would be judged).
CheckReport check_outputs(const CheckOptions& options);

// check_outputs, then the verdict table and a summary line on `out`. Returns the exit code:
// 0 every case passed, 1 a case failed or is missing; throws InvalidInput (exit 2) as above.
int run_check(const CheckOptions& options, std::ostream& out);

}  // namespace ropecheck
