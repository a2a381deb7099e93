// Running gnuplot for the report: finding the executable on PATH, quoting text for a gnuplot
// script, and rendering one script in its own directory as a child process (posix_spawn, no
// shell, so no path or label can inject a command).
//   cd reports/out/latest/plots && gnuplot throughput_vs_tokens.gp   # what a person re-runs
#pragma once

#include <filesystem>
#include <string>

namespace ropecheck {

// The gnuplot on PATH. Throws InvalidInput "gnuplot not found: scripts/install-deps.sh installs
// gnuplot-nox" when there is none.
std::filesystem::path find_gnuplot();

// Runs `gnuplot <script>` with `dir` as its working directory (scripts name their data and output
// files relative to it), stdin from /dev/null, stdout and stderr into dir/<script>.log. Throws
// std::runtime_error with gnuplot's messages when it fails or writes no `expected_output`.
void run_gnuplot(const std::filesystem::path& gnuplot, const std::filesystem::path& dir,
                 const std::string& script, const std::string& expected_output);

// A single-quoted gnuplot string for a label shown in enhanced text mode: the enhanced-mode
// specials (_ ^ { } @ & ~ \) are escaped so that "oracle_f64" is not drawn as a subscript, and
// a quote is doubled (the one escape a single-quoted gnuplot string has).
std::string gp_label(const std::string& text);

}  // namespace ropecheck
