// The `ropecheck` commands as library functions: the CLI (cli_app.cc) parses arguments into these
// options and calls them, and tests call them in-process with the same options.
//   ropecheck list [--json]            ropecheck verify [--impl ID]... [--mutants] ...
// Bad input throws InvalidInput (ropecheck/errors.h); run_cli() turns it into a message and exit 2.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace ropecheck {

// The exit codes of the CLI contract (DESIGN.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // a property failed on a real subject, or a mutant survived
inline constexpr int kExitUsage = 2;   // bad usage or input: nothing was judged

// Where `ropecheck` and `ropecheck verify` write their files unless told otherwise.
inline constexpr const char* kDefaultOutDir = "reports/out/latest";

struct ListOptions {
  bool json = false;
};

struct VerifyOptions {
  std::vector<std::string> impls;       // registry ids, real or mutant; empty: every real one
  std::vector<std::string> properties;  // property ids; empty: the whole catalogue
  int cases = 100;                      // RapidCheck cases per (subject, property), > 0
  std::uint64_t seed = 1;               // fixed by default: a CI verdict must replay
  bool mutants = false;                 // add every mutant and judge mutants by the kill matrix
  std::string reproduce;                // a RapidCheck reproduce string from a __REPRO line
  std::string isa;                      // scalar|avx2|avx512: as on a CPU with nothing above it
  std::filesystem::path out_dir = kDefaultOutDir;
  // Recorded in verify.json; empty: the equivalent `ropecheck verify ...` command is recorded.
  std::vector<std::string> command_line;
};

// Prints the registry (implementations, mutants) and the property catalogue. Returns kExitOk.
int run_list(const ListOptions& options, std::ostream& out);

// Runs the selected properties on the selected subjects, prints the result table (and with
// `mutants` the kill matrix) to `out`, writes out_dir/verify.json. Returns kExitOk or
// kExitFailed; throws InvalidInput for bad options (unknown ids, cases <= 0, bad reproduce
// string, unwritable out_dir) before anything runs.
int run_verify(const VerifyOptions& options, std::ostream& out);

// `ropecheck` with no arguments: verify with mutants into kDefaultOutDir (a bench and a report
// join it later). `command_line` is recorded in the result files.
int run_main_job(std::ostream& out, std::vector<std::string> command_line);

// The whole CLI: parses argv, runs the command, maps every error to a message on `err` and an
// exit code (help and --version: 0; bad usage or InvalidInput: 2). Never throws.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
int run_cli(int argc, char** argv);  // with std::cout / std::cerr

}  // namespace ropecheck
