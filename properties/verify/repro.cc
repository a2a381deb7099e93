// Shell quoting and the replay commands of `ropecheck verify` (the __REPRO lines).
// tests/cli/cli_test.cc runs a printed __REPRO command through /bin/sh to prove the quoting.
#include "properties/verify/repro.h"

#include <fmt/format.h>

#include <algorithm>

#include "plugins/host/plugin_subjects.h"

namespace ropecheck {
namespace {

bool shell_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-./=:,+@%").find(c) != std::string_view::npos;
}

std::string single_quoted(std::string_view arg) {
  std::string quoted = "'";
  for (const char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace

std::string shell_quote(std::string_view arg) {
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), shell_safe)) return std::string(arg);
  return single_quoted(arg);
}

std::string shell_command(const std::vector<std::string>& args) {
  std::string command;
  for (const auto& arg : args) {
    if (!command.empty()) command += ' ';
    command += shell_quote(arg);
  }
  return command;
}

std::string repro_command(const PropertyResult& result, const RunConfig& config) {
  std::string command =
      shell_command({"ropecheck", "verify", "--impl", result.subject, "--property",
                     result.property, "--seed", std::to_string(config.seed), "--threads",
                     std::to_string(config.threads)});
  const std::string extra =
      config.replay_args.empty() ? "" : " " + shell_command(config.replay_args);
  if (result.reproduce.empty()) return command + fmt::format(" --cases {}", config.cases) + extra;
  // Always quoted, as the contract shows it, so that the string reads as one opaque token.
  return command + " --reproduce " + single_quoted(result.reproduce) + extra;
}

std::vector<std::string> verify_command_line(const VerifyOptions& options) {
  std::vector<std::string> args = {"ropecheck", "verify"};
  for (const auto& id : options.impls) args.insert(args.end(), {"--impl", id});
  for (const auto& id : options.properties) args.insert(args.end(), {"--property", id});
  args.insert(args.end(), {"--cases", std::to_string(options.cases), "--seed",
                           std::to_string(options.seed)});
  if (options.mutants) args.emplace_back("--mutants");
  if (!options.isa.empty()) args.insert(args.end(), {"--isa", options.isa});
  if (options.threads > 0) args.insert(args.end(), {"--threads", std::to_string(options.threads)});
  if (options.model_shapes != ModelShapeSet::all) {
    args.insert(args.end(), {"--model-shapes", std::string(to_string(options.model_shapes))});
  }
  if (!options.reproduce.empty()) args.insert(args.end(), {"--reproduce", options.reproduce});
  const auto plugins = plugin_arguments(options.plugins, options.plugin_options);
  args.insert(args.end(), plugins.begin(), plugins.end());
  args.insert(args.end(), {"--out", options.out_dir.string()});
  return args;
}

}  // namespace ropecheck
