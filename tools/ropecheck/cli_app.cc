// run_cli(): the `ropecheck` command line (CLI11) over the command functions of commands.h, and
// the one place where errors become exit codes: help/--version 0, bad usage or InvalidInput 2.
//   ropecheck --help;  ropecheck verify --help;  ropecheck list --json
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "commands.h"
#include "ropecheck/build_info.h"
#include "ropecheck/errors.h"
#include "ropecheck/isa.h"

namespace ropecheck {
namespace {

constexpr const char* kExitCodes =
    "Exit: 0 all passed (and every mutant killed); 1 a property failed on an implementation, or "
    "a mutant survived; 2 bad usage or input.";

std::string version_text() {
  return fmt::format("ropecheck {} (git {}, {}, {}{})", build_info::kVersion,
                     build_info::kGitCommit, build_info::kCompiler, build_info::kBuildType,
                     build_info::kSanitized ? ", ASan+UBSan" : "");
}

// CLI11 would accept "-1" for an unsigned seed by wrapping it; a seed must be exactly what the
// user typed, so it is parsed here, digits only.
std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t seed = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seed);
  if (text.empty() || error != std::errc() || stop != end) {
    throw InvalidInput(fmt::format(
        "--seed: '{}' is not an unsigned 64-bit integer (digits only, at most {})", text,
        std::numeric_limits<std::uint64_t>::max()));
  }
  return seed;
}

struct Commands {
  CLI::App* list = nullptr;
  CLI::App* verify = nullptr;
  ListOptions list_options;
  VerifyOptions verify_options;
  std::string seed_text = "1";
  std::string out_dir = kDefaultOutDir;
};

void add_list(CLI::App& app, Commands& c) {
  c.list = app.add_subcommand(
      "list", "List the RoPE and sinusoidal implementations (capabilities, available here or "
              "not), the mutants and the properties.");
  c.list->add_flag("--json", c.list_options.json, "Print JSON (schema ropecheck.list/1)");
  c.list->footer("Exit: 0; 2 bad usage.");
}

void add_verify(CLI::App& app, Commands& c) {
  auto& v = c.verify_options;
  c.verify = app.add_subcommand(
      "verify", "Run the property suite on the implementations; table on stdout, DIR/verify.json.");
  c.verify->add_option("--impl", v.impls,
                       "Implementation id, real or mutant (repeatable; default: every real one; "
                       "see `ropecheck list`)")
      ->type_name("ID")
      ->allow_extra_args(false);
  c.verify->add_option("--property", v.properties,
                       "Property id (repeatable; default: all; see `ropecheck list`)")
      ->type_name("ID")
      ->allow_extra_args(false);
  c.verify->add_option("--cases", v.cases, "RapidCheck cases per (implementation, property), > 0")
      ->capture_default_str();
  c.verify->add_option("--seed", c.seed_text, "RapidCheck seed, an unsigned 64-bit integer")
      ->type_name("UINT64")
      ->capture_default_str();
  c.verify->add_flag("--mutants", v.mutants,
                     "Also run every mutant; each must be caught (FAILED) by some property");
  c.verify->add_option("--isa", v.isa,
                       "Run as on a CPU whose best level is this one (scalar, avx2, avx512): "
                       "higher levels are skipped, dispatch uses it (env ROPECHECK_ISA)")
      ->type_name("LEVEL");
  c.verify->add_option("--reproduce", v.reproduce,
                       "Replay a failure: the reproduce string of a __REPRO line")
      ->type_name("STR");
  c.verify->add_option("--out", c.out_dir, "Directory for verify.json (created)")
      ->type_name("DIR")
      ->capture_default_str();
  c.verify->footer(kExitCodes);
}

int dispatch(Commands& c, std::vector<std::string> command_line, std::ostream& out) {
  if (c.list->parsed()) return run_list(c.list_options, out);
  if (c.verify->parsed()) {
    c.verify_options.seed = parse_seed(c.seed_text);
    if (!c.verify_options.isa.empty()) {
      parse_isa(c.verify_options.isa);  // InvalidInput (exit 2) for an unknown level
      ::setenv("ROPECHECK_ISA", c.verify_options.isa.c_str(), 1);
    }
    dispatched_isa();  // an unknown or unsupported ROPECHECK_ISA is bad input: exit 2 now
    c.verify_options.out_dir = c.out_dir;
    c.verify_options.command_line = std::move(command_line);
    return run_verify(c.verify_options, out);
  }
  return run_main_job(out, std::move(command_line));
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    CLI::App app("ropecheck: property-based verification and benchmarking of transformer "
                 "positional encodings (RoPE, sinusoidal).\nWithout a command: the main job, "
                 "`verify --mutants --out reports/out/latest`.",
                 "ropecheck");
    app.set_version_flag("--version", version_text());
    app.require_subcommand(0, 1);
    Commands commands;
    add_list(app, commands);
    add_verify(app, commands);
    app.footer(kExitCodes);  // after the subcommands: CLI11 copies a parent's footer into them
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // CLI11 reports help and --version as "errors" with exit code 0; its own codes for real
      // errors are not the contract's, which has one code for bad usage.
      return app.exit(e, out, err) == 0 ? kExitOk : kExitUsage;
    }
    return dispatch(commands, std::vector<std::string>(argv, argv + argc), out);
  } catch (const InvalidInput& e) {
    err << "ropecheck: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    // Not bad input and not a verdict either: nothing was judged, so it must not read as 0.
    err << "ropecheck: internal error: " << e.what() << "\n";
    return kExitFailed;
  } catch (...) {
    err << "ropecheck: internal error: unknown exception\n";
    return kExitFailed;
  }
}

int run_cli(int argc, char** argv) { return run_cli(argc, argv, std::cout, std::cerr); }

}  // namespace ropecheck
